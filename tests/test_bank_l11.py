"""Lesson 11's questions: each solution passes, each known wrong answer fails with its own
feedback, and no answer is "not attempted"."""
import pytest

from gemmlab.grading import judge
from gemmlab.grading.bank import get_question, lesson_questions
from gemmlab.grading.question import Function, evaluate

SOLUTIONS = {
    "11.slots_8x8": 96,
    "11.slots_4x8": 56,
    "11.k_steps": 32,
    "11.register_switch": "one k position",
}


def test_every_question_has_a_solution_here():
    assert sorted(lesson_questions("11")) == sorted(SOLUTIONS)


@pytest.mark.parametrize("qid", sorted(SOLUTIONS))
def test_solution_passes_and_missing_answer_is_not_attempted(qid):
    assert judge(qid, SOLUTIONS[qid]).status == "pass"
    assert judge(qid, ...).status == "not attempted"


@pytest.mark.parametrize("qid,wrong", [(qid, w) for qid in sorted(SOLUTIONS)
                                       for w in get_question(qid).wrong])
def test_each_wrong_answer_fails_with_its_feedback(qid, wrong):
    is_function = isinstance(get_question(qid).kind, Function)
    result = judge(qid, wrong.value if is_function else evaluate(wrong.value))
    assert result.status == "fail"
    assert wrong.feedback in result.feedback
