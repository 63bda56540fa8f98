"""Lesson 09's questions: the figures the lesson works out, written here by hand, pass. Every
reference, known wrong answer and unanswered question of the bank is checked once, in
test_grading_bank.py."""
import numpy as np
import pytest

import gemmlab as gl
from gemmlab.grading import judge
from gemmlab.grading.bank import lesson_questions


def _rank_partial(X, W_up, W_down, p, r):
    k = W_up.shape[1] // p
    return gl.parallel.gelu(X @ W_up[:, r * k:(r + 1) * k]) @ W_down[r * k:(r + 1) * k]


# The seed's reference answers (M = 16, D = 1024, p = 4) and the lesson's, as a student writes them.
SOLUTIONS = {
    "09.Wup_r_shape": (1024, 1024),
    "09.Z_r_shape": (16, 1024),
    "09.Wdown_r_shape": (1024, 1024),
    "09.P_r_shape": (16, 1024),
    "09.middle_comm": "none",
    "09.exit_collective": "all-reduce",
    "09.bias_error_copies": 3,
    "09.gather_traffic_ratio": 3.0,
    "09.train_step_allreduces": 2,
    "09.swiglu_same_split": True,
    "09.rank_partial": _rank_partial,
    "09.any_middle_operator": False,
}


def test_every_question_has_a_solution_here():
    # the labs' programs, written by hand with their broken variants, are in tests/test_labs_*.py
    assert sorted(q for q in lesson_questions("09") if ".lab_" not in q) == sorted(SOLUTIONS)


@pytest.mark.parametrize("qid", sorted(SOLUTIONS))
def test_lesson_figure_passes(qid):
    assert judge(qid, SOLUTIONS[qid]).status == "pass"


def test_a_wrong_split_of_w_down_is_not_accepted():
    def column_split_down(X, W_up, W_down, p, r):
        k = W_up.shape[1] // p
        return gl.parallel.gelu(X @ W_up[:, r * k:(r + 1) * k]) @ np.split(W_down, p, axis=1)[r][:k]
    assert judge("09.rank_partial", column_split_down).status == "fail"


def test_an_operator_that_mixes_columns_is_named():
    r = judge("09.any_middle_operator", True)
    assert r.status == "fail" and "element-wise" in r.feedback, r.feedback
