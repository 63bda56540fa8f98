"""``check(question_id, answer)``: compare a student's answer with the bank and say why it is wrong.

The verdict is printed (so an exercise cell shows it) and returned as a :class:`Result`. A check
never raises for a student's answer: a wrong type, an exception in the student's function and a
missing answer all become a verdict with a message. When ``GEMMLAB_GRADE_LOG`` names a file (the
grader sets it), each verdict is also appended to it as one JSON line.
"""
import json
import os
from dataclasses import dataclass, field


from .bank import get_question
from .question import AnswerTypeError, Function, evaluate

PASS, FAIL, NOT_ATTEMPTED = "pass", "fail", "not attempted"
_MARKS = {PASS: "PASS", FAIL: "FAIL", NOT_ATTEMPTED: "NOT ATTEMPTED"}


@dataclass
class Result:
    question: str
    status: str
    feedback: str
    _printed: bool = field(default=False, repr=False, compare=False)

    def __bool__(self):
        return self.status == PASS

    def __str__(self):
        return f"[{_MARKS[self.status]}] {self.question}: {self.feedback}"

    def __repr__(self):
        return f"Result({self.question!r}, {self.status!r})"

    def _ipython_display_(self):
        # A cell ending in check(...) would show the verdict twice: once printed by check(),
        # once as the cell's value. Skip the second, then display normally again.
        if self._printed:
            self._printed = False
        else:
            print(self)


def _not_attempted(answer):
    return answer is None or answer is Ellipsis


def _judge_value(q, answer):
    kind = q.kind
    value = kind.coerce(answer)
    expected = evaluate(q.answer)
    if kind.same(value, expected):
        return PASS, f"{kind.show(value)} is right. {q.explain}".strip()
    for wrong in q.wrong:
        if kind.same(value, evaluate(wrong.value)):
            return FAIL, f"{kind.show(value)} is a known wrong answer: {wrong.feedback}"
    if hasattr(kind, "close") and kind.close(value, expected):
        off = abs(value - float(expected)) / abs(float(expected))
        return FAIL, (f"close: {kind.show(value)} is {off:.1%} off the answer. The idea is probably "
                      f"right: check the arithmetic, the unit and the rounding (the question asks "
                      f"for {kind.precision()}).")
    hint = f" Hint: {q.hint}" if q.hint else ""
    return FAIL, f"{kind.show(value)} is not right.{hint}"


def _outputs(fn, cases):
    return [fn(*args) for args in cases]


def _judge_function(q, fn):
    kind = q.kind
    cases = list(kind.cases())
    expected = _outputs(q.answer, cases)
    try:
        got = _outputs(fn, cases)
    except Exception as exc:  # the student's code: report, never raise
        return FAIL, f"your function raised {type(exc).__name__}: {exc}"
    if all(_not_attempted(g) for g in got):
        return NOT_ATTEMPTED, "your function returns nothing yet; write its body and run the cell again."
    compare = kind.compare
    mismatch = None
    for i, (g, e) in enumerate(zip(got, expected)):
        try:
            ok = compare.same(compare.coerce(g), e)
        except AnswerTypeError as exc:
            return FAIL, f"on test case {i + 1} your function returned the wrong kind of value: {exc}"
        if not ok:
            mismatch = i
            break
    if mismatch is None:
        return PASS, f"right on all {len(cases)} test cases. {q.explain}".strip()
    for wrong in q.wrong:
        wrong_out = _outputs(wrong.value, cases)
        if all(compare.same(compare.coerce(g), w) for g, w in zip(got, wrong_out)):
            return FAIL, f"your function behaves like a known mistake: {wrong.feedback}"
    hint = f" Hint: {q.hint}" if q.hint else ""
    shown = compare.show(compare.coerce(got[mismatch]))
    return FAIL, (f"test case {mismatch + 1}: got {shown}, expected "
                  f"{compare.show(expected[mismatch])}.{hint}")


def judge(question_id, answer, rng=None):
    """The verdict for one answer, without printing or logging; ``rng`` draws a code question's
    hidden cases (None: its public ones)."""
    q = get_question(question_id)
    if _not_attempted(answer):
        return Result(q.id, NOT_ATTEMPTED, f"no answer yet. {q.prompt}")
    try:
        if q.is_code:       # a kind that runs the code itself: judge(question, fn, rng)
            status, feedback = q.kind.judge(q, q.kind.coerce(answer), rng)
        elif isinstance(q.kind, Function):
            status, feedback = _judge_function(q, q.kind.coerce(answer))
        else:
            status, feedback = _judge_value(q, answer)
    except AnswerTypeError as exc:
        status, feedback = FAIL, f"{exc}."
    return Result(q.id, status, feedback)


def check(question_id, answer):
    """Check ``answer`` for the question ``question_id``; print the verdict and return it."""
    result = judge(question_id, answer)
    print(result)
    result._printed = True
    log = os.environ.get("GEMMLAB_GRADE_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(json.dumps({"question": result.question, "status": result.status,
                                "feedback": result.feedback}) + "\n")
    return result


__all__ = ["check", "judge", "Result", "PASS", "FAIL", "NOT_ATTEMPTED"]
