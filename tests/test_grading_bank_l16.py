"""Lesson 16's questions (gemmlab/grading/bank/l16.py): every answer of the solutions notebook
passes, and each known wrong answer fails naming its misconception."""
import pytest

from gemmlab.grading import judge
from gemmlab.grading.bank import get_question, lesson_questions
from gemmlab.grading.bank.l16 import FEWER_FLOPS, SPEEDUP, WHOLE_ROW

CHOICES = {"16.fewer_flops": "fused attention does fewer FLOPs",
           "16.whole_row_first": "softmax needs the whole row first",
           "16.speedup_source": "the speed-up comes from Tensor Cores"}
# (the options the student reads, the opening words of those that state the misconception)
STATED_BY = {"16.fewer_flops": (FEWER_FLOPS, "yes"),
             "16.whole_row_first": (WHOLE_ROW, "yes"),
             "16.speedup_source": (SPEEDUP, "the Tensor Cores")}


@pytest.mark.parametrize("qid", [q for q in lesson_questions("16") if "lab_" not in q
                                 and "puzzle_" not in q])
def test_the_reference_answer_passes_and_every_known_wrong_one_fails(qid):
    question = get_question(qid)
    answer = question.answer() if callable(question.answer) else question.answer
    assert judge(qid, answer).status == "pass"
    for wrong in question.wrong:
        value = wrong.value() if callable(wrong.value) else wrong.value
        result = judge(qid, value)
        assert result.status == "fail" and str(wrong.feedback)[:40] in result.feedback


@pytest.mark.parametrize("qid", sorted(CHOICES))
def test_each_misconception_question_names_it(qid):
    wrong = [w.value for w in get_question(qid).wrong]
    assert any(CHOICES[qid] in judge(qid, value).feedback for value in wrong)


def test_the_traffic_and_flops_answers_follow_the_models():
    assert judge("16.unfused_mib", (4 * 4096 * 128 + 4 * 4096**2) * 2 / 2**20).status == "pass"
    assert judge("16.cached_ratio", 1 + 4096 / 128).status == "pass"
    assert judge("16.causal_pairs", 32 * 33 // 2).status == "pass"


@pytest.mark.parametrize("qid", sorted(CHOICES))
def test_the_misconception_is_named_to_whoever_picks_an_option_that_states_it(qid):
    """The feedback follows the option, not a letter: after a re-lettering, the letters whose
    option states the misconception are exactly those whose feedback names it."""
    options, opening = STATED_BY[qid]
    stating = {letter for letter, text in options.items() if text.startswith(opening)}
    named = {letter for letter in options if CHOICES[qid] in judge(qid, letter).feedback}
    assert stating and named == stating
