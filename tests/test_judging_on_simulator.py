"""A lab's check on the simulator in a fresh process (what a notebook on a GPU runs): the same
verdicts as the lab in this process, the cell's output kept out of the reply, and a cell that
fails or never ends as a FAIL with the reason."""
import pytest

from gemmlab.grading.bank import get_question
from gemmlab.judging.on_simulator import judge_on_simulator
from gemmlab.labs.kernel_lab import NAIVE

LAB_NAIVE = """TILE = 16
print("noise on stdout")


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
QUESTION = get_question("05.lab_naive")


def _judge(source, **kw):
    return judge_on_simulator(NAIVE, QUESTION, source, "lab_naive", **kw)


def test_a_right_kernel_passes_and_a_wrong_one_fails_with_the_labs_feedback():
    status, feedback, picture = _judge(LAB_NAIVE, seed=4)
    assert status == "pass", feedback
    assert QUESTION.explain in feedback and picture["fault"] is None
    status, feedback, picture = _judge(LAB_NAIVE.replace("if row < M and col < N:", "if True:"))
    assert status == "fail" and "outside" in feedback, feedback
    assert picture["fault"]["kind"] == "out of bounds"      # the picture of the run comes back


@pytest.mark.parametrize("source, status, message", [
    ("raise ValueError('boom')\n", "fail", "your cell raised ValueError: boom"),
    ("x = 1\n", "not attempted", "no lab_naive yet"),
    ("import os\nos._exit(5)\n", "fail", "ended without a verdict (exit status 5)"),
])
def test_a_cell_that_cannot_be_judged_says_why(source, status, message):
    got, feedback, picture = _judge(source)
    assert got == status and message in feedback and picture is None, feedback


def test_a_cell_that_never_ends_fails_at_the_timeout():
    status, feedback, _ = _judge("while True:\n    pass\n", timeout=5)
    assert status == "fail" and "did not finish: no answer within 5 s" in feedback
