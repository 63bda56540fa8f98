"""Lesson 06's questions: the figures the lesson works out, written here by hand, pass. Every
reference, known wrong answer and unanswered question of the bank is checked once, in
test_grading_bank.py."""
import numpy as np
import pytest

from gemmlab.grading import judge
from gemmlab.grading.bank import lesson_questions

# The seed's reference answers (X 8x12, W 12x20, p = 4), written as a student would.
SOLUTIONS = {
    "06.column_Wr_shape": (12, 5),
    "06.column_Yr_shape": (8, 5),
    "06.row_Wr_shape": (3, 20),
    "06.row_Xr_shape": (8, 3),
    "06.row_Pr_shape": (8, 20),
    "06.column_merge": "concat",
    "06.row_merge": "sum",
    "06.stored_split_kind": "column",
    "06.sharded_exit": "reduce-scatter",
    "06.gather_before_gelu": False,
    "06.row_partials": lambda X, W, p: [a @ b for a, b in zip(np.split(X, p, axis=1),
                                                              np.split(W, p, axis=0), strict=True)],
    "06.column_X_shape": (8, 12),
    "06.column_concat_shape": (8, 20),
}


def test_every_question_has_a_solution_here():
    # the labs' programs, written by hand with their broken variants, are in tests/test_labs_*.py
    assert sorted(q for q in lesson_questions("06") if ".lab_" not in q) == sorted(SOLUTIONS)


@pytest.mark.parametrize("qid", sorted(SOLUTIONS))
def test_lesson_figure_passes(qid):
    assert judge(qid, SOLUTIONS[qid]).status == "pass"
