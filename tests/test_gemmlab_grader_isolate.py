"""judge_code: a student's cell runs in its own limited process, the judging stays here."""
import dataclasses
import os
import textwrap
import time
import types

import numpy as np
import pytest

from gemmlab.grading.bank import questions
from gemmlab.judging import FAIL, PASS, Question, code_of, where_it_lives
from gemmlab.judging.cell import CellFunction
from gemmlab_grader import isolate, sandbox
from gemmlab_grader.withheld_bank import PackageSnapshot
from gemmlab_grader.isolate import Isolation, judge_code

QID = "02.naive_matmul"
RIGHT = ("def naive_matmul(A, B):\n    A, B = np.asarray(A, dtype=float), np.asarray(B, dtype=float)\n"
         "    C = np.zeros((A.shape[0], B.shape[1]))\n    for i in range(A.shape[0]):\n"
         "        for j in range(B.shape[1]):\n            for k in range(A.shape[1]):\n"
         "                C[i, j] += A[i, k] * B[k, j]\n    return C\n")


def _unconfined(qid):
    """``qid`` without its declaration (gemmlab/grading/allowed.py): the tests of the worker and
    the sandbox face them with code the allow-list would refuse on its source (``import os``,
    a broadcast), so that what they test is the process boundary, not the allow-list."""
    q = questions()[qid]
    vehicle = types.SimpleNamespace(**{f.name: getattr(q, f.name) for f in dataclasses.fields(q)})
    vehicle.allows = vehicle.rules = None
    vehicle.is_code = True
    return vehicle


@pytest.fixture(autouse=True)
def _process_vehicle(monkeypatch):
    vehicle = _unconfined(QID)
    real = isolate.get_question
    monkeypatch.setattr(isolate, "get_question", lambda qid: vehicle if qid == QID else real(qid))


def _judge(source, seed=3, timeout=20, **kw):
    return judge_code(QID, textwrap.dedent(source), "naive_matmul", seed=seed, timeout=timeout, **kw)


def test_a_right_function_passes_hidden_and_public_cases():
    assert _judge(RIGHT).status == PASS
    assert _judge(RIGHT, seed=None).status == PASS


@pytest.mark.parametrize("source, status, message", [
    ("def naive_matmul(A, B):\n    return 1 / 0\n", "fail", "your function raised ZeroDivisionError"),
    ("def naive_matmul(A, B):\n    return np.zeros((len(A), len(B[0])))\n", "fail",
     "every output is 0"),
    ("import os\ndef naive_matmul(A, B):\n    os._exit(3)\n", "fail", "it ended: exit status 3"),
    ("def naive_matmul(A, B):\n    return ...\n", "not attempted", "returns nothing yet"),
    ("naive_matmul = ...\n", "not attempted", "naive_matmul is ellipsis yet"),
    ("x = 1\n", "not attempted", "no naive_matmul yet"),
    ("naive_matmul = 42\n", "fail", "expected a function (pass its name, without calling it), "
                                    "got int 42"),
    ("raise ValueError('boom')\n", "fail", "your cell raised ValueError: boom"),
    ("class Weird(Exception):\n    pass\ndef naive_matmul(A, B):\n    raise Weird('no')\n", "fail",
     "your function raised Weird: no"),
    ("def naive_matmul(A, B):\n    return {'a': set()}\n", "fail", "wrong kind of value"),
])
def test_what_the_code_does_becomes_a_verdict_with_its_reason(source, status, message):
    result = _judge(source)
    assert result.status == status and message in result.feedback, result.feedback


def test_a_cell_that_fails_after_defining_the_function_is_still_judged():
    result = _judge(RIGHT + "assert check('02.naive_matmul', naive_matmul)\nraise SystemExit\n")
    assert result.status == PASS, result.feedback


def test_endless_loops_in_the_cell_or_the_function_end_at_the_timeout():
    result = _judge("while True:\n    pass\n", timeout=4)
    assert result.status == FAIL
    assert "your cell did not finish: no answer within 4 s" in result.feedback
    # The function's loop waits instead of spinning: the deadline is wall-clock time either way,
    # and 30 s (room for the worker's start on a busy machine) of spinning cost CI 30 CPU-s.
    result = _judge("import time\ndef naive_matmul(A, B):\n    while True:\n"
                    "        time.sleep(0.05)\n", timeout=30)
    assert result.status == FAIL and "TimeoutError: no answer within 30 s" in result.feedback


def test_prints_and_writes_to_the_standard_streams_do_not_disturb_the_judging():
    source = RIGHT.replace("    return", "    print('x' * 100000); import sys\n"
                                         "    sys.stdout.write('junk'); sys.stderr.write('junk')\n"
                                         "    os.write(1, b'junk'); return")
    assert _judge("import os\n" + source).status == PASS


def test_garbage_written_to_the_channel_itself_fails_only_this_answer():
    source = """
    import os
    def naive_matmul(A, B):
        for fd in os.listdir('/proc/self/fd'):
            try:
                os.write(int(fd), b'\\xff' * 64)
            except OSError:
                pass
        return np.zeros((len(A), len(B[0])))
    """
    result = _judge(source)
    assert result.status == FAIL and "broke off" in result.feedback


def test_memorising_the_public_cases_fails_the_hidden_ones():
    public = questions()[QID].kind.cases()
    table = {repr((np.asarray(a).tolist(), np.asarray(b).tolist())): np.asarray(a) @ np.asarray(b)
             for a, b in public}
    source = (f"TABLE = {{k: np.array(v) for k, v in {({k: v.tolist() for k, v in table.items()})!r}"
              f".items()}}\n"
              "def naive_matmul(A, B):\n"
              "    key = repr((np.asarray(A).tolist(), np.asarray(B).tolist()))\n"
              "    return TABLE.get(key, np.zeros((len(A), len(B[0]))))\n")
    assert _judge(source, seed=None).status == PASS
    assert _judge(source, seed=11).status == FAIL


@pytest.fixture(scope="module")
def withheld(tmp_path_factory):
    public = [{"id": q.id, "prompt": q.prompt, "answer_name": q.answer_name}
              for q in questions().values()]
    return str(PackageSnapshot().write_copy(tmp_path_factory.mktemp("pkg"), public))


def test_the_code_never_runs_next_to_the_references(withheld):
    cheat = ("from gemmlab.grading.bank import get_question\n"
             "def naive_matmul(A, B):\n"
             "    return get_question('02.naive_matmul').answer(A, B)\n")
    result = _judge(cheat, isolation=Isolation(package_root=withheld))
    assert result.status == FAIL and "not available" in result.feedback, result.feedback
    hidden = cheat.replace("from gemmlab.grading.bank import get_question\n", "").replace(
        "get_question(", "sys.modules['gemmlab.grading.bank'].get_question(")
    result = _judge("import sys, gemmlab.grading.bank\n" + hidden,
                    isolation=Isolation(package_root=withheld))
    assert result.status == FAIL
    assert "checking code" in result.feedback or "not available" in result.feedback
    assert _judge(RIGHT, isolation=Isolation(package_root=withheld)).status == PASS


@pytest.mark.skipif(sandbox.bwrap() is None, reason="bubblewrap is not installed")
def test_in_the_sandbox_a_detached_process_does_not_outlive_the_judging(withheld):
    marker = f"gemmlab-test-detached-{os.getpid()}"
    source = textwrap.dedent(f"""
    import os, subprocess, sys, time
    code = "import os, time\\nif os.fork(): os._exit(0)\\nos.setsid()\\nwhile True: time.sleep(0.1)"
    subprocess.Popen([sys.executable, "-c", code, {marker!r}], env={{}},
                     start_new_session=True)
    time.sleep(0.5)
    assert os.popen("cat /proc/*/cmdline").read().count({marker!r}) >= 1
    """) + RIGHT
    assert _judge(source, isolation=Isolation(package_root=withheld, sandbox=True)).status == PASS
    deadline = time.monotonic() + 5             # the PID namespace goes with bubblewrap
    while processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not processes_with(marker)


def processes_with(text):
    """Pids of the live (not zombie) processes whose command line contains ``text``."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                mentions = text.encode() in f.read()
            with open(f"/proc/{pid}/stat") as f:
                zombie = f.read().rsplit(")", 1)[1].split()[0] == "Z"
        except OSError:
            continue
        if mentions and not zombie:
            found.append(pid)
    return found


def test_a_memory_hog_is_stopped_by_its_limit():
    hog = "def naive_matmul(A, B):\n    return np.ones((1 << 34,))\n"
    result = _judge(hog, isolation=Isolation(limits=sandbox.Limits(memory_bytes=3 << 30)))
    assert result.status == FAIL and "MemoryError" in result.feedback


def test_what_the_code_writes_into_its_arguments_stays_in_its_process():
    """The attack: zero the inputs and return zeros. With the expected value computed after
    the call from arrays the code could write, that passed; now it is computed first, from the
    judging process's own copy, and the code's writes never come back."""
    zeroing = ("def naive_matmul(A, B):\n    A[:] = 0\n    B[:] = 0\n"
               "    return np.zeros((len(A), len(B[0])))\n")
    for seed in (None, 3):
        result = _judge(zeroing, seed=seed)
        assert result.status == FAIL and "every output is 0" in result.feedback, result.feedback


def test_the_proxy_runs_a_package_helper_where_the_function_lives(monkeypatch):
    seen = {}

    class ByHelper:
        proxy_judge = True

        def coerce(self, answer):
            return answer

        def judge(self, question, fn, rng=None):
            seen["source"], seen["name"] = where_it_lives(fn, code_of)
            return PASS, "ran"

    q = Question(id="99.helper", prompt="p", answer=None, kind=ByHelper())
    monkeypatch.setattr(isolate, "get_question", lambda qid: q)
    assert judge_code("99.helper", RIGHT, "naive_matmul").status == PASS
    assert seen == {"source": RIGHT, "name": "naive_matmul"}
    with pytest.raises(ValueError, match="module-level function of gemmlab"):
        where_it_lives(CellFunction(None, ""), np.sum)


LAB_NAIVE = """TILE = 16


@cuda.jit
def lab_naive(A, B, C):
    M, K = A.shape
    N = B.shape[1]
    row = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    col = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    if row < M and col < N:
        acc = float32(0)
        for k in range(K):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc
"""


def test_a_lab_kind_judges_next_to_the_code_on_hidden_cases(withheld):
    iso = Isolation(package_root=withheld)
    result = judge_code("05.lab_naive", LAB_NAIVE, "lab_naive", seed=4, isolation=iso)
    assert result.status == PASS, result.feedback
    unguarded = LAB_NAIVE.replace("if row < M and col < N:", "if True:")
    result = judge_code("05.lab_naive", unguarded, "lab_naive", seed=4, isolation=iso)
    assert result.status == FAIL and "outside the 27 x 27 array B" in result.feedback, result.feedback
    plain = "def lab_naive(A, B, C):\n    pass\n"
    result = judge_code("05.lab_naive", plain, "lab_naive", seed=4, isolation=iso)
    assert result.status == FAIL and "expected a @cuda.jit kernel" in result.feedback


GROUPS = """def groups(tp, cp, dp, pp, axis):
    found = {}
    for rank in range(tp * cp * dp * pp):
        coords = {"tp": rank % tp, "cp": rank // tp % cp, "dp": rank // (tp * cp) % dp,
                  "pp": rank // (tp * cp * dp)}
        others = tuple(v for name, v in coords.items() if name != axis)
        found.setdefault(others, []).append(rank)
    return list(found.values())
"""


def test_a_distributed_lab_judges_here_and_runs_the_code_there(withheld):
    iso = Isolation(package_root=withheld)
    assert judge_code("13.lab_groups", GROUPS, "groups", seed=6, isolation=iso).status == PASS
    pp_fastest = GROUPS.replace('"tp": rank % tp', '"tp": rank // (cp * dp * pp)').replace(
        '"pp": rank // (tp * cp * dp)', '"pp": rank % pp')
    result = judge_code("13.lab_groups", pp_fastest, "groups", seed=6, isolation=iso)
    assert result.status == FAIL and "tp fastest" in result.feedback, result.feedback


@pytest.mark.parametrize("bad", [0, -1, True, "10"])
def test_judge_code_rejects_a_bad_timeout(bad):
    with pytest.raises(ValueError, match="positive number of seconds"):
        judge_code(QID, RIGHT, "naive_matmul", timeout=bad)


def test_the_sandbox_needs_a_package_copy():
    with pytest.raises(ValueError, match="package copy"):
        Isolation(sandbox=True)


def test_judge_code_refuses_a_value_question():
    with pytest.raises(ValueError, match="not a code question"):
        judge_code("01.weights_gib", "weights_gib = 1", "weights_gib")


@pytest.mark.skipif(sandbox.bwrap() is None, reason="bubblewrap is not installed")
def test_in_the_sandbox_the_code_sees_no_repository_no_network_and_writes_only_its_folder(
        withheld, tmp_path):
    spy = f"""
    import os, socket
    def naive_matmul(A, B):
        problems = []
        if os.path.exists({str(isolate.__file__)!r}) or os.path.exists({str(tmp_path)!r}):
            problems.append("sees the repository")
        try:
            socket.create_connection(("127.0.0.53", 53), timeout=1)
            problems.append("network")
        except OSError:
            pass
        for target in ("/usr/gemmlab-probe", {withheld!r} + "/probe"):
            try:
                open(target, "w")
                problems.append("wrote " + target)
            except OSError:
                pass
        if problems:
            raise RuntimeError(", ".join(problems))
        return np.array([[sum(a * b for a, b in zip(row, col)) for col in zip(*B)] for row in A])
    """
    iso = Isolation(package_root=withheld, sandbox=True, hidden_paths=(str(tmp_path),))
    result = _judge(spy, isolation=iso)
    assert result.status == PASS, result.feedback
