"""check(): verdicts, misconception feedback, wrong types, functions with public and hidden cases,
answer names."""
import numpy as np
import pytest

import gemmlab as gl
from gemmlab.grading import check, judge
from gemmlab.grading.bank import get_question, questions
from gemmlab.grading.checker import judge_question
from gemmlab.judging import (Array, Choice, Exact, Function, Number, Question, Shape,
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


def test_check_writes_nothing_but_its_verdict(tmp_path, monkeypatch, capsys):
    # the old grade log is gone: whatever a notebook's environment says, check() only prints
    monkeypatch.setenv("GEMMLAB_GRADE_LOG", str(tmp_path / "log.jsonl"))
    monkeypatch.chdir(tmp_path)
    check("01.weights_gib", 1.0)
    assert list(tmp_path.iterdir()) == []
    assert capsys.readouterr().out.startswith("[FAIL] 01.weights_gib")


def test_every_bank_id_names_its_lesson():
    for qid, q in questions().items():
        assert qid == q.id and q.lesson.isdigit() and len(q.lesson) == 2


# The answer kinds, on small questions made here.

def _q(kind, answer, wrong=()):
    return Question(id="99.q", prompt="p", answer=answer, kind=kind, wrong=wrong, hint="h")


def test_shape_accepts_the_tuple():
    assert judge_question(_q(Shape(), (8, 20)), (8, 20)).status == "pass"
    assert judge_question(_q(Shape(), (8, 20)), (20, 8)).status == "fail"


def test_shape_list_message_says_tuple():
    from gemmlab.judging import AnswerTypeError
    with pytest.raises(AnswerTypeError, match="tuple"):
        Shape().coerce([8, 20])


def test_choice_is_case_insensitive_and_rejects_unknown_options():
    kind = Choice(["a", "b", "c"])
    assert judge_question(_q(kind, "b"), " B ").status == "pass"
    from gemmlab.judging import AnswerTypeError
    with pytest.raises(AnswerTypeError, match="one of"):
        kind.coerce("d")


def test_exact_int_accepts_integral_floats_only():
    kind = Exact(int)
    assert judge_question(_q(kind, 2048), 2048.0).status == "pass"
    from gemmlab.judging import AnswerTypeError
    with pytest.raises(AnswerTypeError):
        kind.coerce(2048.5)


def test_array_compares_shape_and_values():
    kind = Array(rtol=1e-6)
    ref = np.arange(6.0).reshape(2, 3)
    assert judge_question(_q(kind, ref), ref.tolist()).status == "pass"
    assert judge_question(_q(kind, ref), ref.T).status == "fail"


def _cumsum_question():
    def forgot_the_first(x):
        return np.cumsum(x) - x[0]

    return Question(id="01.fn", prompt="p", answer=np.cumsum,
                    kind=Function(cases=lambda: [(np.arange(5.0),), (np.ones(3),)],
                                  hidden=lambda rng: [(rng.standard_normal(int(n)),)
                                                      for n in rng.integers(2, 9, size=3)]),
                    wrong=[Wrong(forgot_the_first, "starts from the second element")])


def test_function_answers_are_run_on_cases_and_mistakes_recognised():
    q = _cumsum_question()
    assert judge_question(q, np.cumsum).status == "pass"
    r = judge_question(q, q.wrong[0].value)
    assert r.status == "fail" and "second element" in r.feedback
    r = judge_question(q, lambda x: 1 / 0)
    assert r.status == "fail" and "your function raised ZeroDivisionError" in r.feedback
    assert judge_question(q, lambda x: ...).status == "not attempted"
    assert "expected a function" in judge_question(q, np.cumsum(np.arange(5.0))).feedback
    r = judge_question(q, lambda x: {"not": "an array"})
    assert r.status == "fail" and "wrong kind of value" in r.feedback
    r = judge_question(q, lambda x: np.cumsum(x) + 1)
    assert r.status == "fail" and r.feedback.startswith("test case 1: got")


def test_hidden_cases_catch_a_function_that_learned_the_public_ones():
    q = _cumsum_question()
    public = {tuple(args[0]): np.cumsum(args[0]) for args in q.kind.cases()}

    def memorised(x):
        return public.get(tuple(x), np.zeros(len(x)))

    assert judge_question(q, memorised).status == "pass"
    rng = np.random.default_rng(0)
    assert judge_question(q, memorised, rng).status == "fail"
    assert judge_question(q, np.cumsum, rng).status == "pass"


def test_only_kinds_with_judge_are_code_questions():
    assert _cumsum_question().is_code
    assert not _q(Number(), 1.0).is_code


def test_answer_name_defaults_to_the_id_after_the_dot_and_must_be_a_name():
    assert _q(Number(), 1.0).answer_name == "q"
    assert Question(id="01.x", prompt="p", answer=1, answer_name="y").answer_name == "y"
    with pytest.raises(ValueError, match="not a Python name"):
        Question(id="01.x", prompt="p", answer=1, answer_name="a b")


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


@pytest.mark.skipif(gl.device.backend() != "sim", reason="the puzzle runs here on the simulator")
def test_a_kernel_labs_check_hands_its_picture_to_the_drawing(monkeypatch, capsys):
    from gemmlab.labs.solutions import solution
    from gemmlab.viz import kernel
    drawn = []
    monkeypatch.setattr(kernel, "display_picture", lambda picture, show: drawn.append((picture, show)))
    result = check("03.puzzle_map", solution("03.puzzle_map"), show=True)
    assert result.status == "pass" and drawn == [(result.picture, True)]
    assert result.picture["lab"] == "puzzle_map" and result.picture["case"] == "n = 70"
    check("03.puzzle_map", solution("03.puzzle_map"))
    assert drawn[-1][1] is False            # the drawing decides whether it needs attention
    check("03.round1_time", 22)             # a value question has no picture
    assert len(drawn) == 2
