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
    "11.slots_are_allocation": False,
    "11.worked_barriers": 1 + 3,          # the prologue's, then one per K tile of ceil(9 / 4)
}


def test_every_question_has_a_solution_here():
    # the kernel labs (NN.lab_*) are code, judged on the instrumented simulator by their own tests
    values = [q for q in lesson_questions("11") if not q.split(".", 1)[1].startswith("lab_")]
    assert sorted(values) == sorted(SOLUTIONS)


@pytest.mark.parametrize("qid", sorted(SOLUTIONS))
def test_lesson_figure_passes(qid):
    assert judge(qid, SOLUTIONS[qid]).status == "pass"


def test_the_budget_read_as_the_allocation_is_named():
    r = judge("11.slots_are_allocation", True)
    assert r.status == "fail" and "not what the compiler allocates" in r.feedback, r.feedback


def test_a_barrier_per_register_step_is_named():
    r = judge("11.worked_barriers", 4 + 9)
    assert r.status == "fail" and "register level needs no barrier" in r.feedback, r.feedback
