"""Windows natively, for the simulator path (issue 56): every POSIX-only call in gemmlab/ and
gemmlab_grader/ is guarded (a static check over the source), and what needs Linux says so, naming
WSL, when the system is another."""
import ast
import subprocess
import sys
from pathlib import Path

import pytest

from gemmlab import platforms

ROOT = Path(__file__).resolve().parents[1]
# What Windows lacks: os and signal names, modules, and Popen arguments it refuses or ignores.
POSIX_NAMES = {
    "os": {"killpg", "getpgid", "setsid", "setpgrp", "getuid", "geteuid", "getgid", "sysconf",
           "fork", "O_NOFOLLOW", "O_DIRECTORY", "O_CLOEXEC", "O_NONBLOCK", "sched_getaffinity",
           "getloadavg", "mkfifo", "WNOHANG", "wait4", "chown", "nice"},
    "signal": {"SIGKILL", "SIGXCPU", "SIGXFSZ", "SIGHUP", "SIGALRM", "SIGCHLD", "SIGUSR1",
               "SIGQUIT", "alarm", "setitimer", "pthread_kill"},
    "select": {"select", "poll"},       # Windows' select() takes sockets, not pipes
}
POSIX_MODULES = {"resource", "fcntl", "pwd", "grp", "termios", "pty", "tty"}
POSIX_KEYWORDS = {"preexec_fn", "start_new_session"}
GUARDS = {"POSIX", "LINUX", "name", "platform", "hasattr"}     # os.name, sys.platform, hasattr()
LINUX_ONLY = ("gemmlab_grader",)    # its entry point refuses other systems (needs_linux) first


def _mentions_guard(test):
    return any(isinstance(n, ast.Name) and n.id in GUARDS or
               isinstance(n, ast.Attribute) and n.attr in GUARDS for n in ast.walk(test))


def _leaves_early(statement):
    """An ``if <guard>: raise|return|exit`` at the top level of a function."""
    return (isinstance(statement, ast.If) and _mentions_guard(statement.test) and
            isinstance(statement.body[-1], (ast.Raise, ast.Return)))


def posix_uses(tree):
    """(line, what) of each POSIX-only use in ``tree``, with whether a guard covers it: an
    enclosing if/else on :data:`GUARDS`, or an enclosing function that leaves early on one."""
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}

    def guarded(node):
        while node in parents:
            node = parents[node]
            if isinstance(node, (ast.If, ast.IfExp)) and _mentions_guard(node.test):
                return True
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                    _leaves_early(s) for s in node.body):
                return True
        return False

    for node in ast.walk(tree):
        what = None
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.attr in POSIX_NAMES.get(node.value.id, ())):
            what = f"{node.value.id}.{node.attr}"
        elif isinstance(node, ast.Import):
            what = next((a.name for a in node.names if a.name in POSIX_MODULES), None)
        elif isinstance(node, ast.ImportFrom) and node.module in POSIX_MODULES:
            what = node.module
        elif isinstance(node, ast.keyword) and node.arg in POSIX_KEYWORDS:
            what = f"{node.arg}="
        if what:
            yield node.lineno, what, guarded(node)


def _modules():
    for package in ("gemmlab", "gemmlab_grader"):
        yield from sorted((ROOT / package).rglob("*.py"))


def test_every_posix_only_call_is_guarded_or_in_a_linux_only_package():
    """Guarded, or in the grader (LINUX_ONLY), or unreachable elsewhere and saying why
    on the line above ("# POSIX only: ...")."""
    unguarded = []
    for path in _modules():
        rel = path.relative_to(ROOT)
        linux_only = rel.parts[0] in LINUX_ONLY
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        for line, what, guarded in posix_uses(ast.parse(text)):
            said = "# POSIX only: " in lines[line - 2]
            if not (guarded or linux_only or said):
                unguarded.append(f"{rel}:{line}: {what}")
    assert unguarded == [], ("POSIX-only, unguarded (Windows would fail there): put it behind "
                             "gemmlab.platforms.POSIX or LINUX:\n" + "\n".join(unguarded))


def test_the_check_finds_what_it_looks_for():
    """The static check on small sources: unguarded uses are found, guarded ones pass."""
    source = ("import os, resource, signal\n"
              "def end(p):\n    os.killpg(p, signal.SIGKILL)\n"
              "def safe(p):\n    if POSIX:\n        os.killpg(p, 9)\n    else:\n        p.kill()\n"
              "def early(p):\n    if not platforms.POSIX:\n        raise RuntimeError('WSL')\n"
              "    subprocess.Popen([], start_new_session=True)\n")
    found = [(line, what, ok) for line, what, ok in posix_uses(ast.parse(source))]
    assert (1, "resource", False) in found
    assert (3, "os.killpg", False) in found and (3, "signal.SIGKILL", False) in found
    assert (6, "os.killpg", True) in found and (12, "start_new_session=", True) in found


def test_the_grader_says_it_needs_linux_and_wsl_elsewhere():
    """`gemmlab grade` on another system (sys.platform patched before the grader starts) exits
    with one line naming Linux and WSL, before anything of the grader is imported."""
    code = ("import sys; sys.platform = 'win32'\n"
            "import gemmlab.platforms as p; p.LINUX = False\n"
            "from gemmlab_grader.__main__ import main\n"
            "try:\n    main(['submissions'])\nfinally:\n"
            "    print(sorted(m for m in sys.modules if m.startswith('gemmlab_grader.')))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert done.returncode == 1
    assert "The grader (gemmlab grade) needs Linux" in done.stderr
    assert "run it in WSL" in done.stderr and "this is win32" in done.stderr
    assert done.stdout.strip() == "['gemmlab_grader.__main__']"


def test_on_windows_the_notebook_kernels_listen_on_localhost_tcp(monkeypatch):
    """ZeroMQ has no Unix sockets on Windows: the course's kernel managers fall back to TCP on
    127.0.0.1 there, and keep their private Unix sockets elsewhere."""
    from gemmlab import notebook_run
    assert notebook_run.LocalKernelManager().transport == "ipc"
    monkeypatch.setattr(platforms, "POSIX", False)
    for kind in (notebook_run.LocalKernelManager, notebook_run.LocalAsyncKernelManager):
        manager = kind()
        assert (manager.transport, manager.ip) == ("tcp", "127.0.0.1"), kind


@pytest.mark.parametrize("code, words", [
    ("from gemmlab.judging import cell; cell.platforms.POSIX = False; cell.plain_channel()",
     "needs POSIX"),
])
def test_the_gpu_backends_cell_child_says_it_needs_posix(code, words):
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=ROOT, env={"GEMMLAB_BACKEND": "sim", "PATH": "/usr/bin"})
    assert words in done.stderr and "WSL" in done.stderr and "GEMMLAB_BACKEND=sim" in done.stderr


def test_a_signal_windows_lacks_is_still_described():
    from gemmlab.judging.cell import describe_exit
    assert describe_exit(-9).startswith("signal SIGKILL (killed")
    assert describe_exit(-22) == "signal 22" or describe_exit(-22).startswith("signal SIG")


def test_a_pipe_is_read_with_a_time_limit_by_a_thread_where_select_takes_no_pipes(monkeypatch):
    """Windows' select takes sockets only: the answer runtime's replies (every Python answer's
    check()) are read there by a thread. The same reads, on Linux with that path forced."""
    monkeypatch.setattr(platforms, "POSIX", False)
    child = subprocess.Popen([sys.executable, "-c", "import sys, time; sys.stdout.write('ab'); "
                              "sys.stdout.flush(); time.sleep(1); sys.stdout.write('cde')"],
                             stdout=subprocess.PIPE)
    reader = platforms.PipeReader(child.stdout)
    assert reader.chunks is not None                        # the thread's queue, not select
    assert reader.read(1, 30) == b"a" and reader.read(5, 30) == b"b"
    assert reader.read(5, 0.05) is None                     # nothing within the limit
    assert reader.read(2, 30) == b"cd" and reader.read(5, 30) == b"e"
    assert reader.read(5, 30) == b"" and reader.read(5, 30) == b""     # the end, and after it
    child.wait()


def test_check_of_a_python_answer_runs_where_select_takes_no_pipes_and_a_rank_lab_says_posix(
        monkeypatch):
    """check()'s answer runtime with the pipe reader Windows uses: a right answer passes, an
    endless one ends at its deadline; a rank lab (its ranks are forked) says what it needs."""
    from gemmlab.grading.bank import get_question
    from gemmlab.judging import runtime
    monkeypatch.setattr(platforms, "POSIX", False)
    q = get_question("03.amdahl_function")
    right = "def amdahl_speedup(s, p):\n    return 1 / (s + (1 - s) / p)\n"
    assert runtime.judge(q, right, "amdahl_speedup")[0] == "pass"
    endless = "def amdahl_speedup(s, p):\n    while True:\n        pass\n"
    status, text = runtime.judge(q, endless, "amdahl_speedup", timeout=2)
    assert status == "fail" and "no answer within 2 s" in text, text
    with pytest.raises(RuntimeError, match="needs POSIX.*forked process.*WSL"):
        runtime.judge(get_question("07.lab_ring"), "def ring_allreduce(comm, x):\n    return x\n",
                      "ring_allreduce")
