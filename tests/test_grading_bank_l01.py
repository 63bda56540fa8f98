"""Lesson 01's questions: the references give the lesson's figures, every known wrong answer is
recognised with its own feedback, and wrong types get a message rather than a traceback."""
import numpy as np
import pytest

from gemmlab.grading import FAIL, NOT_ATTEMPTED, PASS, judge
from gemmlab.grading.bank import get_question, lesson_questions
from gemmlab.judging import evaluate

EXPECTED = {  # the figures of the lesson, written out: a drift in a reference shows here
    "01.weights_gib": 13.04,
    "01.weights_fp32_gib": 26.08,
    "01.training_state_gib": 104.31,
    "01.fp16_rne": [2048, 2048, 2050, 2052],
    "01.assoc_orders": [0, 1],
    "01.fp16_ones_sum": 2048,
    "01.fp16_ones_pairwise": 4096,
    "01.bf16_ones_sum": 256,
    "01.fp16_input_fp32_acc": 4096,
    "01.product_overflow": [np.inf, 90000],
    "01.inference_budget_misses": "b, d, e",
    "01.mixed_precision_contract": "d",
    "01.oom_cause": "c",
    "01.e4m3_satfinite": 448,
    "01.e4m3_overflow_always_nan": False,
    "01.fp8_scale": 8960,
    "01.half_bytes_half_peak": False,
    "01.same_precision_needed": False,
}


def test_lesson_01_has_the_required_questions():
    ids = lesson_questions(1)
    assert 8 <= len(ids) <= 20
    assert set(ids) == set(EXPECTED)
    assert {"01.weights_gib", "01.fp16_ones_sum"} <= set(ids)


@pytest.mark.parametrize("qid", sorted(EXPECTED))
def test_reference_and_lesson_figure_pass(qid):
    q = get_question(qid)
    assert judge(qid, evaluate(q.answer)).status == PASS
    r = judge(qid, EXPECTED[qid])
    assert r.status == PASS, r.feedback
    assert bool(r)


@pytest.mark.parametrize("qid", sorted(EXPECTED))
def test_not_attempted_and_wrong_types(qid):
    assert judge(qid, None).status == NOT_ATTEMPTED
    assert judge(qid, ...).status == NOT_ATTEMPTED
    r = judge(qid, object())
    assert r.status == FAIL and "expected" in r.feedback


def test_some_specific_feedback():
    assert "GB" in judge("01.weights_fp32_gib", 28.0).feedback
    assert "tie" in judge("01.fp16_rne", [2048, 2050, 2050, 2052]).feedback
    assert "lost" in judge("01.assoc_orders", [1, 1]).feedback
    assert "saturate" in judge("01.product_overflow", [65504, 90000]).feedback
    assert "4096" in judge("01.fp16_input_fp32_acc", 4097).feedback
    r = judge("01.fp16_ones_sum", 3000)
    assert r.status == FAIL and "Hint" in r.feedback
    assert judge("01.fp16_ones_sum", "2048").status == FAIL       # a string, not a number
    assert judge("01.fp16_ones_sum", np.float16(2048)).status == PASS


@pytest.mark.parametrize("answer", ["b, d, e", "bde", "e d b", ["b", "d", "e"], {"B", "d", "e"},
                                    ("e", "b", "d"), "b;d;e"])
def test_options_accept_any_spelling(answer):
    assert judge("01.inference_budget_misses", answer).status == PASS


def test_options_reject_unknown_letters():
    r = judge("01.inference_budget_misses", "b, z")
    assert r.status == FAIL and "expected some of" in r.feedback
    r = judge("01.inference_budget_misses", 3)
    assert r.status == FAIL and "letters" in r.feedback
    r = judge("01.inference_budget_misses", "b, d, a")
    assert r.status == FAIL and "Hint" in r.feedback
    assert judge("01.mixed_precision_contract", "D").status == PASS
    assert "expected one of" in judge("01.mixed_precision_contract", "e").feedback


@pytest.mark.parametrize("qid,wrong,words", [
    ("01.e4m3_overflow_always_nan", True, "non-saturating cast"),
    ("01.e4m3_satfinite", 512, "E5M2"),
    ("01.fp8_scale", 0.05 / 448, "undoes the scaling"),
    ("01.fp8_scale", 1, "flush to zero"),
    ("01.half_bytes_half_peak", True, "halves the weights only"),
    ("01.same_precision_needed", True, "accumulates in FP32"),
])
def test_fp8_and_memory_misconceptions_are_named(qid, wrong, words):
    r = judge(qid, wrong)
    assert r.status == FAIL and words in r.feedback, r.feedback


def test_an_unscaled_nan_is_not_the_saturated_value():
    assert judge("01.e4m3_satfinite", float("nan")).status == FAIL
