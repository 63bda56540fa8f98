"""Issue 54, item 3: a notebook cell's ranks are processes of the answer runtime, forked from a
parent that never ran the cell, and the judge routes every message. Each attack here shares
data between ranks some other way; each is shown to share it under the old model (the ranks as
threads of one process, :func:`run_ranks` on the function itself), and to FAIL both in
``check()`` (the cell judged in the runtime) and in a graded run (the grader's ``judge_code``),
with feedback that names what happened."""
import ast
import linecache
import os
import sys

import numpy as np
import pytest

from gemmlab.grading.bank import get_question
from gemmlab.grading.checker import judge_alone_in_a_worker
from gemmlab.labs import run_ranks
from gemmlab.labs.ring import Tags

QID = "07.lab_ring"
# What the attacks reach for: builtins through a `match` pattern (a name in a string, which the
# source lint never sees), and from there any module the runtime has loaded.
REACH = '''def reach():
    match print:
        case object(__self__=b):
            pass
    match b:
        case object(__import__=imp):
            pass
    return b, imp
'''
# The module-level list, the class attribute, the builtins attribute and the default argument:
# each rank puts its x there and returns the sum of the last n, while zeros travel in the ring's
# pattern.
ZEROS = '''    for step in range(2 * (n - 1)):
        chunk = np.array_split(x, n)[(r - step - 1) % n]
        comm.sendrecv(np.zeros_like(chunk), (r + 1) % n, (r - 1) % n)
    return sum(parts[-n:])
'''
SHARING = {
    "module_list": "PARTS = []\n\n\ndef ring_allreduce(comm, x):\n    n, r = comm.size, comm.rank\n"
                   "    parts = PARTS\n    parts.append(x.copy())\n" + ZEROS,
    "class_attribute": "class Box:\n    parts = []\n\n\ndef ring_allreduce(comm, x):\n"
                       "    n, r = comm.size, comm.rank\n    parts = Box.parts\n"
                       "    parts.append(x.copy())\n" + ZEROS,
    "builtins_attribute": REACH + "\n\ndef ring_allreduce(comm, x):\n    n, r = comm.size, comm.rank\n"
                          "    b, imp = reach()\n    match b:\n        case object(ring_parts=parts):\n"
                          "            pass\n        case _:\n            parts = b.ring_parts = []\n"
                          "    parts.append(x.copy())\n" + ZEROS,
    "default_argument": "def ring_allreduce(comm, x, parts=[]):\n    n, r = comm.size, comm.rank\n"
                        "    parts.append(x.copy())\n" + ZEROS,
}


def as_cell(source, name="ring_allreduce"):
    """The function ``name`` as a notebook cell defines it (its source in linecache under an
    IPython cell's name), so that check() judges the cell in the answer runtime."""
    filename = f"<ipython-input-{abs(hash(source)) % 10**6}-0123456789ab>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"np": np}
    exec(compile(source, filename, "exec"), namespace)
    return namespace[name]


def checked(source, qid=QID):
    return judge_alone_in_a_worker(get_question(qid), as_cell(source))


def graded(source, qid=QID):
    from gemmlab_grader.isolate import judge_code
    return judge_code(qid, source, "ring_allreduce", seed=4, timeout=240)


@pytest.mark.parametrize("attack", sorted(SHARING))
def test_state_shared_by_threads_is_not_shared_by_rank_processes(attack):
    source = SHARING[attack]
    tags = Tags(4, 16)
    ns = {"np": np}
    exec(source, ns)
    threads = run_ranks(ns["ring_allreduce"], [(x,) for x in tags.inputs], False)
    assert threads.error is None
    assert all(np.array_equal(out, tags.total) for out in threads.outputs)   # it shares the sum
    for result in (checked(source), graded(source)):
        assert result.status == "fail", result.feedback
        assert "the ring's messages carried zeros: rank 0 to rank 1 in step 0" in result.feedback
        assert "a rank is a process of its own" in result.feedback


SNOOP = REACH + '''

def ring_allreduce(comm, x):
    b, imp = reach()
    os = imp("os")
    seen = {"fds": [fd for fd in range(3, 1024) if _open(os, fd)]}
    for what, path in (("parent", os.getppid()), ("self", os.getpid())):
        try:
            b.open(f"/proc/{path}/mem", "rb")
            seen[what] = "opened"
        except OSError:
            seen[what] = "refused"
    try:
        imp("resource").setrlimit(7, (64, 64))
        seen["rlimit"] = "raised"
    except (OSError, ValueError):
        seen["rlimit"] = "refused"
    raise RuntimeError(f"nothing reached: {seen}")


def _open(os, fd):
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False
'''


def test_a_rank_finds_only_its_own_pipes_and_no_process_s_memory():
    for result in (checked(SNOOP), graded(SNOOP)):
        assert result.status == "fail", result.feedback
        # whichever rank raises first is named
        assert " raised RuntimeError: nothing reached: " in result.feedback, result.feedback
        seen = ast.literal_eval(result.feedback.split("nothing reached: ", 1)[1].split(" at line")[0])
        assert len(seen["fds"]) == 2, seen      # its own two pipe ends, none of another rank
        assert seen["parent"] == seen["self"] == "refused"   # no file opens (RLIMIT_NOFILE 0)
        assert seen["rlimit"] == "refused"                   # nor can the limit be raised


KILLER = REACH + '''

def ring_allreduce(comm, x):
    b, imp = reach()
    os = imp("os")
    if comm.rank == 0:
        group, me, parent = os.getpgid(0), os.getpid(), os.getppid()
        for pid in range(me - 64, me + 64):
            try:
                if pid not in (me, parent) and os.getpgid(pid) == group:
                    os.kill(pid, 9)         # a sibling: the same runtime's process group
            except ProcessLookupError:
                pass
    return comm.sendrecv(x, (comm.rank + 1) % comm.size, (comm.rank - 1) % comm.size)
'''


def test_a_rank_cannot_kill_a_sibling():
    """The filter refuses the signal (before it, as root in check() and as the sandbox's user
    alike, the siblings died: "rank 1's process ended: signal SIGKILL")."""
    for result in (checked(KILLER), graded(KILLER)):
        assert result.status == "fail", result.feedback
        assert "rank 0 raised PermissionError" in result.feedback, result.feedback
        assert "SIGKILL" not in result.feedback


# Channels between ranks that need no file descriptor, each tried from a rank: a process of its
# own (RLIMIT_NPROC does not bind root), a program, a signal to the runtime, a System V shared
# memory segment and a kernel key (both findable by every process of the user).
CHANNELS = REACH + '''

def ring_allreduce(comm, x):
    b, imp = reach()
    os, ctypes = imp("os"), imp("ctypes")
    libc = ctypes.CDLL(None)
    seen = {}
    try:
        if os.fork() == 0:
            match os:
                case object(_exit=leave):
                    leave(0)
        seen["fork"] = "done"
    except OSError:
        seen["fork"] = "refused"
    try:
        os.kill(os.getppid(), 0)
        seen["signal"] = "done"
    except OSError:
        seen["signal"] = "refused"
    seen["shmget"] = "refused" if libc.shmget(0, 4096, 0o1600) == -1 else "done"
    seen["add_key"] = "refused" if libc.syscall(248, b"user", b"gemmlab", b"x", 1,
                                                -3) == -1 else "done"
    try:
        os.execv("/bin/true", ["true"])
    except OSError:
        seen["execv"] = "refused"
    raise RuntimeError(f"nothing reached: {seen}")
'''


@pytest.mark.skipif(sys.platform != "linux" or os.uname().machine != "x86_64",
                    reason="the rank's seccomp filter is Linux x86-64's")
def test_a_rank_can_start_no_process_send_no_signal_and_share_no_ipc():
    for result in (checked(CHANNELS), graded(CHANNELS)):
        assert result.status == "fail", result.feedback
        seen = ast.literal_eval(result.feedback.split("nothing reached: ", 1)[1].split(" at line")[0])
        assert seen == dict.fromkeys(("fork", "signal", "shmget", "add_key", "execv"),
                                     "refused"), result.feedback


def test_the_next_case_starts_from_a_clean_parent():
    """A rank that leaves something in its module (a global) on the first case does not find it
    on the next: every case's ranks are forked afresh from the parent that never ran the cell."""
    source = ('SEEN = []\n\n\ndef ring_allreduce(comm, x):\n    SEEN.append(len(x))\n'
              '    if len(SEEN) > 1:\n        raise RuntimeError(f"saw {SEEN}")\n'
              '    return x * comm.size\n')
    result = checked(source)
    assert "saw" not in result.feedback, result.feedback
    assert result.status == "fail"          # x * size is not the sum: judged, not crashed


FORGER = '''def ring_allreduce(comm, x):
    match type(comm).send:
        case object(__globals__=g):
            pass
    return g["ask"]("_world")       # the runtime's own ask, for a call that is not comm's
'''


def test_an_ask_for_what_is_not_a_comm_call_is_refused_naming_it():
    """The runtime's ask() is reachable from a Comm method's globals: a forged ask for anything
    but send, recv, sendrecv, all_reduce and all_gather stops the run, naming it."""
    for result in (checked(FORGER), graded(FORGER)):
        assert result.status == "fail", result.feedback
        assert "comm._world is not a comm call" in result.feedback, result.feedback


def test_a_rank_lab_cell_loaded_in_a_code_worker_is_refused_not_called_from_threads():
    """A rank lab's cell loaded in a code worker (judge_alone, check()'s path for a kernel lab on
    a GPU backend) was once called from one thread per rank over the worker's one pipe, whose
    frames then interleaved (an H100 run: "rank 2 raised CodeError: the process running your
    code broke off"). Such a cell is refused by name now; check() and the grader judge it in the
    runtime, where the same cell passes."""
    from gemmlab.judging import runtime
    from gemmlab.judging.cell import judge_alone
    from gemmlab.labs.solutions import cell
    q = get_question(QID)
    source, name, _ = cell(QID, name="ring_allreduce")
    status, text = judge_alone(q, source, name)
    assert status == "fail" and "runs in the answer runtime, one process per rank" in text, text
    assert runtime.serves(q)
    assert runtime.judge(q, source, name, rng=np.random.default_rng(5))[0] == "pass"
