"""Numbers are asked for with a stated precision: the figure a lesson prints passes, a near miss
is called close (not a wrong idea), and every numeric question says in its prompt what it wants.
A function's verdict comes with the tally of its cases (partial credit)."""
import math

import numpy as np
import pytest

from gemmlab.grading import judge
from gemmlab.grading.bank import get_question, questions
from gemmlab.grading.checker import _judge_value
from gemmlab.judging import Number, Question, Wrong
from gemmlab.judging.verdict import tallied

NUMBER_QUESTIONS = sorted(qid for qid, q in questions().items() if isinstance(q.kind, Number))


# The figures as the lessons print them (issue 18): each one passes its question.
@pytest.mark.parametrize("qid,printed", [
    ("04.gemm_ideal_time_us", 32),          # lesson 04: "compute-bound, 32 us"
    ("04.ridge_point", 14),                 # "about 14 FLOP/B"
    ("04.ridge_point", 13.96),
    ("04.gemm_gflop", 2.15),
    ("04.gemm_gflop", 2.147),
    ("04.vector_add_intensity", 0.083),
    ("04.vector_add_intensity", 0.0833),
    ("04.linear_intensity_m128", 60),
    ("04.linear_intensity_m128", 60.24),
    ("01.training_state_gib", 104),
    ("01.training_state_gib", 104.3),
    ("01.weights_gib", 13.04),
    ("03.gemm_8x_speedup", 3.33),
])
def test_the_figure_a_lesson_prints_passes(qid, printed):
    assert judge(qid, printed).status == "pass"


@pytest.mark.parametrize("qid,near_miss", [
    ("04.gemm_ideal_time_us", 31),          # 3% off: not the reference rounded to 2 figures
    ("04.ridge_point", 13.5),
    ("04.gemm_gflop", 2.1),
    ("01.training_state_gib", 101),
    ("03.round1_time", 21),                 # an exact answer missed by one unit
])
def test_a_near_miss_is_called_close_not_a_wrong_idea(qid, near_miss):
    q = get_question(qid)
    r = judge(qid, near_miss)
    assert r.status == "fail" and r.feedback.startswith("close: ")
    assert q.kind.precision() in r.feedback
    assert "known wrong answer" not in r.feedback and "Hint" not in r.feedback


def test_far_answers_still_get_the_hint():
    q = get_question("04.ridge_point")
    r = judge("04.ridge_point", 20.0)
    assert r.status == "fail" and q.hint in r.feedback and "close" not in r.feedback


def test_rounding_below_the_asked_precision_is_not_enough():
    # 2 significant figures asked: 30 is 32.05 rounded to one figure, 6% off
    assert judge("04.gemm_ideal_time_us", 30).status == "fail"
    # 3 figures asked: 2.1 is 2.147 rounded to 2 figures
    assert judge("04.gemm_gflop", 2.1).status == "fail"


def test_a_known_wrong_answer_wins_over_close():
    # Wrong answers are matched first; one within 5% keeps its own feedback
    q = Question(id="99.n", prompt="p (2 significant figures)", answer=100.0,
                 kind=Number(sig=2), wrong=[Wrong(97.0, "the idea behind 97")], hint="h")
    assert "the idea behind 97" in _judge_value(q, 97.0)[1]
    assert _judge_value(q, 96.5)[1].startswith("close: ")


def test_a_wrong_value_is_recognised_when_rounded_too():
    # 0.25 ms is the bound; 0.233 is what mixing GiB with TB/s gives, typed with 2 figures
    r = judge("04.vector_add_time_ms", 0.233)
    assert r.status == "fail" and "known wrong answer" in r.feedback


def test_number_kind_rounding_rules():
    kind = Number(sig=2)
    assert kind.same(32.0, 32.052) and kind.same(32.05, 32.052) and kind.same(32.1, 32.052)
    assert not kind.same(31.0, 32.052)
    assert kind.close(31.0, 32.052) and not kind.close(40.0, 32.052)
    assert not kind.close(1.0, 0.0)                       # no relative nearness around zero
    assert Number().precision() == "the exact value"
    assert Number(sig=1).precision() == "1 significant figure"
    assert Number(sig=3).precision() == "3 significant figures"
    assert Number(sig=2).same(math.inf, math.inf) and not Number(sig=2).same(1e308, math.inf)


@pytest.mark.parametrize("qid", NUMBER_QUESTIONS)
def test_every_numeric_question_states_its_precision_in_the_prompt(qid):
    q = get_question(qid)
    wanted = "exact" if q.kind.sig is None else f"{q.kind.sig} significant figure"
    assert wanted in q.prompt, f"{qid}: the prompt should say it wants {q.kind.precision()}"


# A function's verdict comes with its tally (issue 55: partial credit from the one judging run):
# every case is called, past the first that is wrong or raises, and those right are counted.
def _tally_of(fn, rng_seed=4):
    q = get_question("02.row_major_index")
    with tallied() as tally:
        status, feedback = q.kind.judge(q, fn, np.random.default_rng(rng_seed))
    cases = q.kind.hidden(np.random.default_rng(rng_seed))
    return status, feedback, tally, cases


def test_a_function_wrong_on_odd_rows_is_counted_right_on_the_even_ones():
    status, feedback, tally, cases = _tally_of(lambda r, c, rows, cols: r * cols + c + r % 2)
    even = sum(r % 2 == 0 for r, _, _, _ in cases)
    assert status == "fail" and "test case" in feedback
    assert tally == [even, len(cases)] and 0 < even < len(cases), cases


def test_a_function_that_raises_on_some_cases_is_counted_on_the_others():
    def fn(r, c, rows, cols):
        if r % 2:
            raise IndexError("odd row")
        return r * cols + c
    status, feedback, tally, cases = _tally_of(fn)
    assert status == "fail" and feedback.startswith("your function raised IndexError")
    assert tally == [sum(r % 2 == 0 for r, _, _, _ in cases), len(cases)]


def test_an_unwritten_function_is_not_attempted_and_has_no_tally():
    status, _, tally, _ = _tally_of(lambda r, c, rows, cols: None)
    assert status == "not attempted" and tally == []
