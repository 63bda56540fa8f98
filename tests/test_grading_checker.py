"""check(): verdicts, misconception feedback, wrong types, functions, the grade log."""
import json

import numpy as np
import pytest

from gemmlab.grading import check, judge
from gemmlab.grading.bank import get_question, questions
from gemmlab.grading.checker import _judge_value
from gemmlab.grading.question import (Array, Choice, Exact, Function, Number, Question, Shape,
                                      Wrong)


def test_pass_prints_and_returns_a_truthy_result(capsys):
    r = check("01.weights_gib", 7e9 * 2 / 2**30)
    assert r.status == "pass" and bool(r)
    assert "[PASS] 01.weights_gib" in capsys.readouterr().out


def test_known_wrong_answer_names_the_misconception():
    r = judge("01.weights_gib", 7e9 * 2 / 1e9)
    assert r.status == "fail" and not r
    assert "GiB" in r.feedback and "known wrong answer" in r.feedback


def test_unknown_wrong_answer_gets_the_hint():
    q = get_question("01.weights_gib")
    r = judge("01.weights_gib", 99.0)
    assert r.status == "fail" and q.hint in r.feedback


@pytest.mark.parametrize("answer", [..., None])
def test_missing_answer_is_not_attempted(answer):
    assert judge("01.weights_gib", answer).status == "not attempted"


@pytest.mark.parametrize("answer", ["13.04", [13.04], True, {"gib": 13}])
def test_wrong_type_gets_a_message_not_a_traceback(answer):
    r = judge("01.weights_gib", answer)
    assert r.status == "fail" and "expected a number" in r.feedback


def test_unknown_question_suggests_close_ids():
    with pytest.raises(KeyError, match="01.weights_gib"):
        judge("01.weight_gib", 1)


def test_numpy_scalars_and_one_element_arrays_are_numbers():
    assert judge("01.weights_gib", np.float32(7e9 * 2 / 2**30)).status == "pass"
    assert judge("01.weights_gib", np.array([7e9 * 2 / 2**30])).status == "pass"


def test_grade_log_receives_one_json_line_per_check(tmp_path, monkeypatch):
    log = tmp_path / "log.jsonl"
    monkeypatch.setenv("GEMMLAB_GRADE_LOG", str(log))
    check("01.weights_gib", 1.0)
    check("01.weights_gib", ...)
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["status"] for r in records] == ["fail", "not attempted"]


def test_every_bank_id_names_its_lesson():
    for qid, q in questions().items():
        assert qid == q.id and q.lesson.isdigit() and len(q.lesson) == 2


# The answer kinds, on small questions made here.

def _q(kind, answer, wrong=()):
    return Question(id="99.q", prompt="p", answer=answer, kind=kind, wrong=wrong, hint="h")


def test_shape_accepts_the_tuple():
    assert _judge_value(_q(Shape(), (8, 20)), (8, 20))[0] == "pass"
    assert _judge_value(_q(Shape(), (8, 20)), (20, 8))[0] == "fail"


def test_shape_list_message_says_tuple():
    from gemmlab.grading.question import AnswerTypeError
    with pytest.raises(AnswerTypeError, match="tuple"):
        Shape().coerce([8, 20])


def test_choice_is_case_insensitive_and_rejects_unknown_options():
    kind = Choice(["a", "b", "c"])
    assert _judge_value(_q(kind, "b"), " B ")[0] == "pass"
    from gemmlab.grading.question import AnswerTypeError
    with pytest.raises(AnswerTypeError, match="one of"):
        kind.coerce("d")


def test_exact_int_accepts_integral_floats_only():
    kind = Exact(int)
    assert _judge_value(_q(kind, 2048), 2048.0)[0] == "pass"
    from gemmlab.grading.question import AnswerTypeError
    with pytest.raises(AnswerTypeError):
        kind.coerce(2048.5)


def test_array_compares_shape_and_values():
    kind = Array(rtol=1e-6)
    ref = np.arange(6.0).reshape(2, 3)
    assert _judge_value(_q(kind, ref), ref.tolist())[0] == "pass"
    assert _judge_value(_q(kind, ref), ref.T)[0] == "fail"


def test_function_answers_are_run_on_cases_and_mistakes_recognised(monkeypatch):
    def reference(x):
        return np.cumsum(x)

    def forgot_the_first(x):
        return np.cumsum(x) - x[0]

    q = Question(id="01.fn", prompt="p", answer=reference,
                 kind=Function(cases=lambda: [(np.arange(5.0),), (np.ones(3),)]),
                 wrong=[Wrong(forgot_the_first, "starts from the second element")])
    monkeypatch.setattr("gemmlab.grading.checker.get_question", lambda qid: q)
    assert judge("01.fn", reference).status == "pass"
    r = judge("01.fn", forgot_the_first)
    assert r.status == "fail" and "second element" in r.feedback
    r = judge("01.fn", lambda x: 1 / 0)
    assert r.status == "fail" and "ZeroDivisionError" in r.feedback
    assert judge("01.fn", lambda x: ...).status == "not attempted"
    assert "expected a function" in judge("01.fn", np.cumsum(np.arange(5.0))).feedback


def test_a_cell_ending_in_check_shows_the_verdict_once(capsys):
    r = check("01.weights_gib", 1.0)
    r._ipython_display_()          # what IPython does with the cell's value
    assert capsys.readouterr().out.count("[FAIL]") == 1
    r._ipython_display_()          # shown again later on request
    assert capsys.readouterr().out.count("[FAIL]") == 1


def test_infinity_matches_only_the_same_infinity():
    kind = Number(rtol=1e-3)
    assert kind.same(float("inf"), float("inf"))
    assert not kind.same(float("-inf"), float("inf"))
    assert not kind.same(1e308, float("inf"))
