"""Lesson 10's questions: each solution passes, each known wrong answer fails with its own
feedback, and no answer is "not attempted"."""
import pytest

from gemmlab.grading import judge
from gemmlab.grading.bank import lesson_questions

SOLUTIONS = {
    "10.baseline_reads": 64,
    "10.outer_reads": 256,
    "10.ratio_gain": 4.0,
    "10.four_x_faster": False,
    "10.slots_m_n": lambda m, n: m * n + m + n,
}


def test_every_question_has_a_solution_here():
    assert sorted(lesson_questions("10")) == sorted(SOLUTIONS)


@pytest.mark.parametrize("qid", sorted(SOLUTIONS))
def test_solution_passes_and_missing_answer_is_not_attempted(qid):
    assert judge(qid, SOLUTIONS[qid]).status == "pass"
    assert judge(qid, ...).status == "not attempted"
