"""Lesson 11's questions: the figures the lesson works out, written here by hand, pass. Every
reference, known wrong answer and unanswered question of the bank is checked once, in
test_grading_bank.py."""
import pytest

from gemmlab.grading import judge
from gemmlab.grading.bank import lesson_questions

SOLUTIONS = {
    "11.slots_8x8": 96,
    "11.slots_4x8": 56,
    "11.k_steps": 32,
    "11.register_switch": "one k position",
    "11.blocks_185": 1,
    "11.blocks_123": 2,
}


def test_every_question_has_a_solution_here():
    # the kernel labs (NN.lab_*) are code, judged on the instrumented simulator by their own tests
    values = [q for q in lesson_questions("11") if not q.split(".", 1)[1].startswith("lab_")]
    assert sorted(values) == sorted(SOLUTIONS)


@pytest.mark.parametrize("qid", sorted(SOLUTIONS))
def test_lesson_figure_passes(qid):
    assert judge(qid, SOLUTIONS[qid]).status == "pass"
