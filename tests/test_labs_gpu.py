"""The kernel labs' GPU path, tested on the simulator with a stand-in for the check in a fresh
worker on the simulator (tests/test_judging_cell.py runs the real one): one call into it, timing
only after a pass in a notebook's check, the student's ladder. The real timing runs under
GEMMLAB_BACKEND=gpu (benchmarks/gpu_labs.sh)."""
import linecache

import numpy as np
import pytest

import gemmlab as gl
from gemmlab.grading import judge
from gemmlab.labs import gpu, kernel_lab, my_ladder
from gemmlab.labs.solutions import solution

ROW = dict(lab="tiled", n=4096, tflops=7.4, rel_err=1e-6, course="tiled", course_tiles={"T": 16},
           course_tflops=7.7, cublas_tflops=49.3, gpu="NVIDIA H200")


class Runner:
    """Stands in for judge_alone: records each call, answers with ``verdict``."""

    def __init__(self):
        self.calls, self.verdict = [], ("pass", "right at 19x19x19.", None)

    def __call__(self, question, source, name, rng=None, picture=False):
        self.calls.append((question.id, source, name, rng))
        return self.verdict if picture else self.verdict[:2]


@pytest.fixture
def on_gpu(monkeypatch, tmp_path):
    """Pretend the backend is a GPU; record the calls into the runner; keep the ladder in tmp."""
    runner = Runner()
    calls = runner.calls
    monkeypatch.setattr(gpu, "judge_alone", runner)
    monkeypatch.setattr(kernel_lab.device, "backend", lambda: "gpu")
    monkeypatch.setattr(gpu, "measure", lambda lab, kernel: dict(ROW, lab=lab.name))
    monkeypatch.setenv("GEMMLAB_LADDER", str(tmp_path / "my_ladder.json"))
    return runner, calls


def test_a_passing_check_calls_the_runner_once_then_times_and_records(on_gpu):
    runner, calls = on_gpu
    kernel = solution("05.lab_tiled")
    result = judge("05.lab_tiled", kernel)
    assert result.status == "pass"
    assert len(calls) == 1
    qid, source, name, seed = calls[0]
    assert (qid, name, seed) == ("05.lab_tiled", "lab_tiled", None)
    assert "def lab_tiled(A, B, C):" in source and "### BEGIN SOLUTION" in source
    assert ("your tiled kernel: 7.4 TFLOP/s at 4096^3, 96% of the course's `tiled` (T=16), "
            "15% of cuBLAS (NVIDIA H200)") in result.feedback
    assert my_ladder.load()["tiled"]["tflops"] == 7.4


def test_a_failing_verdict_or_the_graders_hidden_cases_are_not_timed(on_gpu, monkeypatch):
    runner, calls = on_gpu
    monkeypatch.setattr(gpu, "measure", lambda lab, kernel: pytest.fail("timed"))
    runner.verdict = ("fail", "at 19x19x19: a race.", None)
    assert judge("05.lab_tiled", solution("05.lab_tiled")).feedback == "at 19x19x19: a race."
    runner.verdict = ("pass", "right.", None)
    q = gl.grading.bank.get_question("05.lab_tiled")
    status, *_ = q.kind.judge(q, solution("05.lab_tiled"), np.random.default_rng(1))
    assert status == "pass" and calls[-1][3] is not None


def test_a_wrong_result_at_full_size_fails(on_gpu, monkeypatch):
    monkeypatch.setattr(gpu, "measure", lambda lab, kernel: dict(ROW, rel_err=0.3))
    result = judge("05.lab_tiled", solution("05.lab_tiled"))
    assert result.status == "fail" and "relative error 3.0e-01" in result.feedback


def test_a_kernel_whose_cell_is_unknown_says_so(on_gpu, monkeypatch):
    kernel = solution("05.lab_tiled")
    monkeypatch.delitem(linecache.cache, kernel.py_func.__code__.co_filename)
    result = judge("05.lab_tiled", kernel)
    assert result.status == "fail" and "the instrumented checks cannot run" in result.feedback


def test_the_ladder_plot_shows_the_records_or_says_how_to_get_them(tmp_path, monkeypatch):
    monkeypatch.setenv("GEMMLAB_LADDER", str(tmp_path / "none.json"))
    ax = my_ladder.plot()
    assert len(ax.patches) == 0 and "No lab measured on a GPU yet" in ax.texts[0].get_text()
    my_ladder.record("tiled", ROW)
    my_ladder.record("naive", dict(ROW, lab="naive", tflops=1.1, course="naive", course_tflops=1.2))
    my_ladder.record("outer", {"tflops": 3.0})              # an entry missing fields is left out
    ax = my_ladder.plot()
    assert [t.get_text() for t in ax.get_xticklabels()] == ["naive", "tiled"]
    assert len(ax.patches) == 4 and ax.get_lines()[0].get_ydata()[0] == 49.3


@pytest.mark.skipif(gl.device.backend() != "gpu", reason="times a kernel on a GPU")
def test_measure_on_the_gpu():
    row = gpu.measure(kernel_lab.TILED, solution("05.lab_tiled"), n=1024, repeats=3)
    assert row["rel_err"] < gpu.MAX_REL_ERR and row["tflops"] > 0 and row["course_tflops"] > 0


def test_a_puzzle_on_a_gpu_is_checked_on_the_simulator_not_timed_and_brings_its_picture(on_gpu,
                                                                                    monkeypatch):
    runner, calls = on_gpu
    monkeypatch.setattr(gpu, "measure", lambda lab, kernel: pytest.fail("timed"))
    runner.verdict = ("pass", "right at n = 70, n = 45.", {"block": [2, 0, 0]})
    result = judge("03.puzzle_map", solution("03.puzzle_map"))
    assert result.status == "pass" and result.picture == {"block": [2, 0, 0]}
    assert [c[0] for c in calls] == ["03.puzzle_map"]
