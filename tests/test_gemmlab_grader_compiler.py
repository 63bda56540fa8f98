"""The grading run's compile service (gemmlab_grader.compiler, nvcompile --serve): the same
figures as the one-shot compiler child for the course's reference kernels, one reply per caller
when threads ask at once, and the attacks: a kernel whose compile passes the deadline, a request
that crashes its child, patches the compiler, forges replies or kills the service; the service
killed from outside and started again; no process of it left after it is closed or after a
grading run."""
import os
import signal
import threading

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

import gemmlab as gl
from gemmlab.judging import PREAMBLE, load_function
from gemmlab.judging.worker import frame
from gemmlab.labs import compile as nvc
from gemmlab.labs.kernel_source import kernel_cell
from gemmlab.labs.solutions import cell
from gemmlab_grader import compiler as compiler_
from gemmlab_grader import isolate
from gemmlab_grader.compiler import CompileService
from gemmlab_grader.grade import Settings, grade_notebook
from gemmlab_grader.isolate import Isolation

pytestmark = pytest.mark.skipif(gl.device.backend() != "sim",
                                reason="the instrumented simulator runs on the simulator backend")
GEMM_ARGS = [["array", "float32", 2]] * 3
REFERENCES = ["05.lab_naive", "05.lab_tiled", "08.lab_pingpong", "10.lab_outer",
              "11.lab_twolevel"]


def request(source, name="k", arguments=GEMM_ARGS):
    return {"source": source, "name": name, "arguments": arguments,
            "archs": [list(a) for a in nvc.ARCHS], "cell": nvc.CELL}


def reference(qid):
    source, name, _ = cell(qid)
    return request(kernel_cell(source, name)[0], name)


def shared_kernel(size):
    """A kernel with ``size`` float32 of shared memory (4 * size bytes, as ptxas says)."""
    return request(f"S = {size}\n@cuda.jit\ndef k(A, B, C):\n    s = cuda.shared.array(S, float32)\n"
                   f"    i = cuda.threadIdx.x\n    s[i] = A[0, i]\n    cuda.syncthreads()\n"
                   f"    C[0, i] = s[S - 1 - i]\n")


HONEST = shared_kernel(64)


def alive(pids):
    """Those of ``pids`` still running (not zombies)."""
    left = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] != "Z":
                    left.append(pid)
        except OSError:
            pass
    return left


@pytest.fixture(scope="module")
def warm():
    service = CompileService(Isolation(), deadline=120)
    yield service
    service.close()


@pytest.fixture()
def fresh():
    service = CompileService(Isolation(), deadline=8)
    yield service
    service.close()


def test_the_service_gives_the_one_shot_childs_figures_for_the_reference_kernels(warm):
    for qid in REFERENCES:
        source, name, _ = cell(qid)
        kernel = load_function(source, name, f"<reference {qid}>")
        alone = nvc.compile_kernel(kernel, GEMM_ARGS)
        served = nvc.compile_kernel(kernel, GEMM_ARGS, compiler=warm)
        assert alone["ok"] and set(alone["archs"]) == {"sm_75", "sm_90"}, (qid, alone)
        assert served == alone, qid         # registers, spills, shared and stack bytes
    assert warm.starts == 1


def test_threads_asking_at_once_each_get_their_own_reply(warm):
    sizes = [64 * (i + 1) for i in range(6)]
    replies = {}

    def ask(size):
        replies[size] = warm.compile(shared_kernel(size))
    threads = [threading.Thread(target=ask, args=(size,)) for size in sizes]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for size in sizes:
        assert replies[size]["ok"], replies[size]
        assert {f["shared_bytes"] for f in replies[size]["archs"].values()} == {4 * size}


def test_a_crash_a_patched_compiler_or_forged_replies_change_only_their_own_reply(warm):
    crashed = warm.compile(request("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n"))
    assert crashed == {"ok": False, "stage": "setup",
                       "message": "the compiler ended without a reply (signal SIGSEGV)"}
    patched = warm.compile(request("import numba.cuda\nnumba.cuda.compile_ptx = None\n"
                                   + HONEST["source"]))
    assert not patched["ok"]                # its own compile, with the compiler it broke
    forged = b"".join(frame({"id": n, "reply": {"ok": True, "archs": {}}}) for n in range(200))
    forger = request(f"import os, time\ntime.sleep(0.3)\nFORGED = {forged!r}\n"
                     f"for fd in range(64):\n    try:\n        os.write(fd, FORGED)\n"
                     f"    except OSError:\n        pass\n")
    replies = {}
    threads = [threading.Thread(target=lambda r=r: replies.update({id(r): warm.compile(r)}))
               for r in (forger, HONEST)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert replies[id(HONEST)]["ok"] and replies[id(HONEST)]["archs"]   # not a forged reply
    assert not replies[id(forger)]["ok"]    # what it wrote on its own pipe spoilt only its reply
    big = warm.compile(request("import os\nos.write(3, b'x' * (2 << 20))\nos._exit(0)\n"))
    assert big["message"] == f"the compiler's reply was larger than {1 << 20} bytes"
    honest = warm.compile(HONEST)
    assert honest["ok"] and {f["shared_bytes"] for f in honest["archs"].values()} == {256}
    assert {f["registers"] for f in honest["archs"].values()} != {1}
    assert warm.starts == 1                 # the service itself lived through all of it


def test_a_compile_past_the_deadline_is_stopped_and_the_service_goes_on(fresh):
    slow = request("X = 9 ** 9 ** 9\n" + HONEST["source"])      # kept: arithmetic on numbers
    assert kernel_cell(slow["source"], "k")[0] == slow["source"]
    reply = fresh.compile(slow)
    assert reply == {"ok": False, "stage": "setup",
                     "message": "the compiler did not finish within 8 s"}
    assert fresh.compile(HONEST)["ok"] and fresh.starts == 1


def test_a_service_killed_from_outside_or_by_a_request_is_started_again(fresh):
    assert fresh.compile(HONEST)["ok"]
    for pid in fresh.pids():
        os.kill(pid, signal.SIGKILL)
    assert fresh.compile(HONEST)["ok"] and fresh.starts == 2
    killer = fresh.compile(request("import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n"))
    assert not killer["ok"] and killer["message"].startswith(
        "the compile service ended twice while compiling this kernel")
    assert fresh.starts == 3                # its request was sent once more, then given up
    assert fresh.compile(HONEST)["ok"] and fresh.starts == 4


def test_closing_leaves_no_process_and_later_requests_fail_saying_so(fresh):
    assert fresh.compile(request("import time\ntime.sleep(0.5)\n" + HONEST["source"]))["ok"]
    pids = fresh.pids()
    assert pids
    fresh.close()
    assert alive(pids) == []
    assert fresh.compile(HONEST) == {"ok": False, "stage": "setup", "message":
                                     "the compile service is closed: the grading run is over"}


def test_a_service_that_cannot_start_is_tried_three_times_then_refused(monkeypatch):
    monkeypatch.setattr(compiler_, "MODULE", "gemmlab.labs.no_such_module")
    service = CompileService(Isolation(), start_timeout=120)
    try:
        replies = [service.compile(HONEST) for _ in range(4)]
    finally:
        service.close()
    assert all(r["stage"] == "setup" and "could not be started" in r["message"] for r in replies)
    assert "ended while starting" in replies[0]["message"] and "no_such_module" in \
        replies[0]["message"]
    assert service.start_failures == 3 and "3 tries" in replies[3]["message"]


def test_a_grading_run_compiles_in_its_one_service_and_leaves_no_process(tmp_path, monkeypatch):
    started, seen = [], []
    real_compile = CompileService.compile

    class Spy(CompileService):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            started.append(self)

        def compile(self, request):
            reply = real_compile(self, request)
            seen.append(self.pids())
            return reply
    monkeypatch.setattr("gemmlab_grader.grade.CompileService", Spy)
    source, _name, _ = cell("03.puzzle_map")
    nbformat.write(new_notebook(cells=[new_code_cell(PREAMBLE), new_code_cell(source)]),
                   tmp_path / "03_puzzles.ipynb")
    graded = grade_notebook(tmp_path / "03_puzzles.ipynb",
                            settings=Settings(timeout=120, notebook_timeout=600, seed=3))
    assert graded.results["03.puzzle_map"] == "pass", graded.feedback["03.puzzle_map"]
    assert len(started) == 1 and started[0].starts == 1 and len(seen) == 1
    assert seen[0] and alive(seen[0]) == []


def test_judge_code_outside_a_run_compiles_in_a_confined_child_of_its_own(monkeypatch):
    """A test or a script calls judge_code without a run's compile service: the kernel is still
    compiled confined (ConfinedCompiler), never in an unconfined child of the caller."""
    started, real = [], isolate.start_confined
    monkeypatch.setattr(isolate, "start_confined",
                        lambda iso, workdir, module, *a, **k: started.append(module)
                        or real(iso, workdir, module, *a, **k))
    monkeypatch.setattr(nvc, "_compile_alone", lambda *a: pytest.fail("compiled unconfined"))
    source, name, _ = cell("03.puzzle_map")
    result = isolate.judge_code("03.puzzle_map", source, name, seed=11)
    assert result.status == "pass", result.feedback
    assert started.count("gemmlab.labs.nvcompile") == 1
    broken = source.replace("+ 10", "+ 10 + not_defined_anywhere")
    result = isolate.judge_code("03.puzzle_map", broken, name, seed=11)
    assert result.status == "fail" and "does not compile for a GPU" in result.feedback
