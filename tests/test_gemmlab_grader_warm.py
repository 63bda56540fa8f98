"""A notebook's warm worker (gemmlab_grader.warm, worker --warm): each code answer in a fresh
fork, judged as a cold worker judges it (pass, fail, crash, endless loop: the same verdict and
words), and the attacks: an answer that kills the warm process, leaves a detached process,
changes a module for the next answer or reaches for a forbidden object; a warm process that
cannot start (the answers get cold workers); a grading run that forks its code answers from one
warm process per notebook and leaves no process."""
import time

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

import gemmlab as gl
from gemmlab.judging import PREAMBLE
from gemmlab.labs.solutions import cell
from gemmlab_grader import warm as warm_
from gemmlab_grader.grade import Settings, grade_notebook
from gemmlab_grader.isolate import Isolation, judge_code
from gemmlab_grader.warm import WarmWorker
from test_gemmlab_grader_compiler import alive
from test_gemmlab_grader_sandbox import WORKS_HERE

pytestmark = pytest.mark.skipif(gl.device.backend() != "sim",
                                reason="the code workers run on the simulator backend")
NAIVE, NAME = cell("02.naive_matmul")[:2]
LOOPS = "def naive_matmul(A, B):\n"      # what every hand-written answer below starts with


@pytest.fixture()
def warm():
    worker = WarmWorker(Isolation())
    yield worker
    worker.close()


def judged(source, warm=None, qid="02.naive_matmul", timeout=60):
    result = judge_code(qid, source, NAME, seed=7, timeout=timeout, isolation=Isolation(),
                        warm=warm)
    return result.status, result.feedback


@pytest.mark.parametrize("source", [
    NAIVE,
    LOOPS + "    return A[:, :1] * B[:1, :]\n",                     # wrong numbers
    "import os\n" + LOOPS + "    os._exit(7)\n",                   # its process ends
    LOOPS + "    raise KeyError('k')\n",
], ids=["pass", "wrong", "exit", "raises"])
def test_a_fork_gives_the_cold_workers_verdict_in_the_same_words(warm, source):
    assert judged(source, warm) == judged(source)
    assert warm.starts == 1


def test_an_endless_loop_ends_at_its_deadline_and_the_next_answer_is_judged(warm):
    status, feedback = judged(LOOPS + "    while True:\n        pass\n", warm, timeout=3)
    assert status == "fail" and "no answer within 3 s" in feedback
    assert judged(NAIVE, warm)[0] == "pass" and warm.starts == 1


def test_an_answer_that_kills_the_warm_process_fails_alone_and_it_starts_again(warm):
    killer = "import os\n" + LOOPS + "    os.kill(os.getppid(), 9)\n    return A[:, :1]\n"
    assert judged(killer, warm)[0] != "pass"
    assert judged(NAIVE, warm)[0] == "pass"
    assert warm.starts == 2


def test_what_an_answer_leaves_running_is_killed_before_the_next_begins(warm, tmp_path):
    mark = tmp_path / "pid"
    daemon = (f"import os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
              f"        open({str(mark)!r}, 'w').write(str(os.getpid()))\n"
              f"        time.sleep(120)\n    os._exit(0)\n" + NAIVE)
    assert judged(daemon, warm)[0] == "pass"
    for _ in range(100):
        if mark.exists() and mark.read_text():
            break
        time.sleep(0.05)
    assert alive([int(mark.read_text())]) == []


def test_nothing_an_answer_does_reaches_the_next(warm):
    planted = "import numpy, gemmlab\nnumpy.PLANTED = gemmlab.PLANTED = 1\n" + NAIVE
    assert judged(planted, warm)[0] == "pass"
    looks = ("import numpy, gemmlab\nassert not hasattr(numpy, 'PLANTED')\n"
             "assert not hasattr(gemmlab, 'PLANTED')\n" + NAIVE)
    assert judged(looks, warm) == judged(looks)
    assert judged(looks, warm)[0] == "pass"


def test_each_fork_puts_its_own_questions_rules_out_of_reach(warm):
    """A question without rules runs first in the warm process; the next question's forbidden
    np.matmul, reached without naming it, is still refused in its fork."""
    source, name, _ = cell("03.puzzle_map")
    assert judge_code("03.puzzle_map", source, name, seed=7, isolation=Isolation(),
                      warm=warm).status == "pass"
    sneaky = "import numpy\n" + LOOPS + "    return getattr(numpy, 'mat' + 'mul')(A, B)\n"
    status, feedback = judged(sneaky, warm)
    assert status == "fail" and "np.matmul" in feedback, feedback
    assert (status, feedback) == judged(sneaky)


def _refuse(*args, **kwargs):
    raise OSError("no processes left")


@pytest.mark.parametrize("breaks", [("WORKER", "gemmlab.no_such_module"),
                                    ("start_confined", _refuse)], ids=["no-ready", "no-start"])
def test_a_warm_process_that_cannot_start_leaves_the_answers_to_cold_workers(monkeypatch,
                                                                             breaks):
    monkeypatch.setattr(warm_, *breaks)
    worker = WarmWorker(Isolation(), start_timeout=60)
    try:
        for _ in range(3):
            assert judged(NAIVE, worker)[0] == "pass"
        assert worker.starts == 0 and worker.start_failures == warm_.MAX_START_FAILURES
    finally:
        worker.close()


def test_closing_leaves_no_process(warm):
    assert judged(NAIVE, warm)[0] == "pass"
    pids = warm.pids()
    assert pids
    warm.close()
    assert alive(pids) == [] and warm.pids() == set()


def test_a_grading_run_forks_a_notebooks_code_answers_from_one_warm_process(tmp_path,
                                                                            monkeypatch):
    started, forks = [], []

    class Spy(WarmWorker):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            started.append(self)

        def channel(self, timeout):
            channel = super().channel(timeout)
            forks.append((channel is not None, self.pids()))
            return channel
    monkeypatch.setattr("gemmlab_grader.grade.WarmWorker", Spy)
    cells = [new_code_cell(PREAMBLE)] + [new_code_cell(cell(q)[0]) for q in
                                          ("03.puzzle_map", "03.puzzle_zip")]
    nbformat.write(new_notebook(cells=cells), tmp_path / "03_puzzles.ipynb")
    graded = grade_notebook(tmp_path / "03_puzzles.ipynb",
                            settings=Settings(timeout=120, notebook_timeout=600, seed=3,
                                              sandbox=WORKS_HERE))
    for q in ("03.puzzle_map", "03.puzzle_zip"):
        assert graded.results[q] == "pass", graded.feedback[q]
    assert len(started) == 1 and started[0].starts == 1
    assert [ok for ok, _ in forks] == [True, True]
    assert all(alive(pids) == [] for _, pids in forks)
