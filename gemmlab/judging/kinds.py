"""The kinds of answer a question asks for: a number, an exact value, a choice, a shape, an array,
a function. Each knows how to reject the wrong type with a message a student understands
(``coerce`` raises :class:`~gemmlab.judging.verdict.AnswerTypeError`), how to compare a well-typed
answer with the reference (``same``) and how to show a value (``show``). A kind that runs code
(``Function``, the labs' kinds) has ``judge(question, fn, rng)`` instead of ``same``.
"""
import copy
import math
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Optional, Sequence

import numpy as np

from .verdict import FAIL, NOT_ATTEMPTED, PASS, AnswerTypeError, count, is_missing

_RAISED = object()      # in place of what a call that raised did not return


def describe(value):
    """"type repr" of an answer for a message, the repr cut to 60 characters."""
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 60 else text[:57] + '...'}"


@dataclass(frozen=True)
class Number:
    """A real number, asked for with a stated precision.

    ``sig`` is the number of significant figures the question asks for (``None``: the exact
    value). An answer passes when it lies within ``rtol``/``atol`` of the reference, or when it
    is the reference rounded to ``sig`` or more significant figures (so the 32 a lesson prints
    for 32.05 passes when ``sig=2``), unless it shows fewer figures than asked and differs from
    the reference rounded to ``sig`` (2.63 for 2.628 at ``sig=4``). A failing answer within ``near`` (relative) of the
    reference is a near miss: the checker says "close" instead of offering the hint for a
    wrong idea.
    """
    rtol: float = 1e-3
    atol: float = 0.0
    unit: str = ""
    sig: Optional[int] = None
    near: float = 0.05

    def coerce(self, answer):
        if isinstance(answer, (bool, np.bool_)) or not isinstance(answer, (int, float, np.number)):
            if isinstance(answer, np.ndarray) and answer.size == 1:
                return float(answer.reshape(()))
            unit = f" (in {self.unit})" if self.unit else ""
            raise AnswerTypeError(f"expected a number{unit}, got {describe(answer)}")
        return float(answer)

    def precision(self):
        """The precision the question asks for, in words (its prompt says the same)."""
        if self.sig is None:
            return "the exact value"
        return f"{self.sig} significant figure{'s' if self.sig > 1 else ''}"

    def same(self, answer, expected):
        expected = float(expected)
        if np.isnan(expected):
            return bool(np.isnan(answer))
        if np.isinf(expected):          # inf - inf is NaN: infinities match only themselves
            return answer == expected
        if abs(answer - expected) <= self.atol + self.rtol * abs(expected):
            return not self._too_few_figures(answer, expected)
        return self.sig is not None and any(
            math.isclose(answer, float(f"{expected:.{digits}g}"), rel_tol=1e-12)
            for digits in range(self.sig, 18))

    def _too_few_figures(self, answer, expected):
        """Whether ``answer`` is written with fewer figures than asked and is not the reference
        at that precision (2.63 when 4 figures of 2.628 are asked: inside ``rtol``, yet wrong)."""
        if self.sig is None or self.sig < 2 or answer == 0 or not math.isfinite(answer):
            return False
        fewer = float(f"{answer:.{self.sig - 1}g}")
        return (math.isclose(answer, fewer, rel_tol=1e-12)
                and not math.isclose(answer, float(f"{expected:.{self.sig}g}"), rel_tol=1e-12))

    def close(self, answer, expected):
        """A near miss: within ``near`` of a finite, non-zero reference."""
        expected = float(expected)
        return (math.isfinite(answer) and math.isfinite(expected) and expected != 0
                and abs(answer - expected) <= self.near * abs(expected))

    def show(self, value):
        return f"{value:.6g}" + (f" {self.unit}" if self.unit else "")


@dataclass(frozen=True)
class Exact:
    """An exact value: an integer, a string (compared without case or surrounding spaces), a bool."""
    type: type = int
    unit: str = ""

    def coerce(self, answer):
        if self.type is int:
            if isinstance(answer, (bool, np.bool_)):
                raise AnswerTypeError(f"expected a whole number, got {describe(answer)}")
            if isinstance(answer, (float, np.floating)) and float(answer).is_integer():
                return int(answer)
            if not isinstance(answer, (int, np.integer)):
                raise AnswerTypeError(f"expected a whole number, got {describe(answer)}")
            return int(answer)
        if self.type is bool:
            if not isinstance(answer, (bool, np.bool_)):
                raise AnswerTypeError(f"expected True or False, got {describe(answer)}")
            return bool(answer)
        if self.type is str:
            if not isinstance(answer, str):
                raise AnswerTypeError(f"expected a string, got {describe(answer)}")
            return answer.strip().lower()
        if not isinstance(answer, self.type):
            raise AnswerTypeError(f"expected a {self.type.__name__}, got {describe(answer)}")
        return answer

    def same(self, answer, expected):
        if isinstance(expected, str):
            expected = expected.strip().lower()
        return answer == expected

    def show(self, value):
        return f"{value!r}" + (f" {self.unit}" if self.unit else "")


@dataclass(frozen=True)
class Choice:
    """One option out of a fixed set, given by its key (case does not matter)."""
    options: Sequence[str]

    def coerce(self, answer):
        keys = [o.lower() for o in self.options]
        if not isinstance(answer, str) or answer.strip().lower() not in keys:
            raise AnswerTypeError(
                f"expected one of {', '.join(repr(o) for o in self.options)}, got {describe(answer)}")
        return answer.strip().lower()

    def same(self, answer, expected):
        return answer == expected.lower()

    def show(self, value):
        return repr(value)


@dataclass(frozen=True)
class Shape:
    """An array shape: a tuple of non-negative integers, as NumPy's ``.shape`` gives it."""

    def coerce(self, answer):
        if isinstance(answer, list):
            raise AnswerTypeError(
                f"expected a shape as a tuple, e.g. (8, 20), got a list {answer!r}: "
                f"write it with round brackets, tuple({answer!r})")
        if not isinstance(answer, tuple) or not all(
                isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n >= 0 for n in answer):
            raise AnswerTypeError(f"expected a shape as a tuple of whole numbers, got {describe(answer)}")
        return tuple(int(n) for n in answer)

    def same(self, answer, expected):
        return answer == tuple(expected)

    def show(self, value):
        return repr(tuple(value))


@dataclass(frozen=True)
class Array:
    """A NumPy array (or anything ``np.asarray`` turns into numbers) compared elementwise."""
    rtol: float = 1e-6
    atol: float = 0.0

    def coerce(self, answer):
        try:
            arr = np.asarray(answer, dtype=np.float64)
        except (TypeError, ValueError):
            raise AnswerTypeError(f"expected an array of numbers, got {describe(answer)}") from None
        return arr

    def same(self, answer, expected):
        expected = np.asarray(expected, dtype=np.float64)
        return answer.shape == expected.shape and bool(
            np.allclose(answer, expected, rtol=self.rtol, atol=self.atol, equal_nan=True))

    def show(self, value):
        value = np.asarray(value)
        return f"array of shape {value.shape}" if value.size > 8 else np.array2string(value)


def declared_cell(question_id, source, name):
    """The cell a worker (or ``check()``) runs for ``source``: the answer loaded under
    ``question_id``'s declaration (:mod:`gemmlab.grading.answer`), so that it is judged in the
    namespace its question builds, whichever process runs it and whatever kind judges it."""
    return (f"from gemmlab.grading.answer import load_answer\n"
            f"globals().update(load_answer({question_id!r}, {source!r}, {name!r}))\n")


@dataclass(frozen=True)
class Function:
    """A function the student writes; it is called on test cases and its outputs compared with the
    reference implementation's, with ``compare`` (a Number or Array kind).

    ``cases()`` gives the public cases, the ones the notebook's ``check()`` uses; ``hidden(rng)``
    draws other cases (other shapes, values, rank counts) from a NumPy Generator: the grader's.
    """
    cases: Callable[[], Sequence[tuple]]
    compare: Any = field(default_factory=Array)
    hidden: Callable[[np.random.Generator], Sequence[tuple]] = None
    proxy_judge: ClassVar[bool] = True  # judge() only calls fn on data: the grader may pass a
                                        # proxy to the student's process (see judging.where)

    def coerce(self, answer):
        if not callable(answer):
            raise AnswerTypeError(f"expected a function (pass its name, without calling it), "
                                  f"got {describe(answer)}")
        return answer

    def judge(self, question, fn, rng=None):
        """(status, feedback) for the student's function ``fn``: the public cases when ``rng``
        is None, else hidden cases drawn from it. The expected values come first, from this
        process's own copy of each case; ``fn`` gets copies, so nothing it writes into its
        arguments reaches the reference or the comparison. Every case is called, and the cases
        right are counted (:func:`~.verdict.count`). Never raises for the student's code."""
        cases = list(self.cases() if rng is None else self.hidden(rng))
        expected = [question.answer(*copy.deepcopy(args)) for args in cases]
        known = [[wrong.value(*copy.deepcopy(args)) for args in cases] for wrong in question.wrong]
        got, raised = [], None
        for args in cases:
            try:
                got.append(fn(*copy.deepcopy(args)))
            except Exception as exc:  # the student's code: report, never raise
                got.append(_RAISED)
                raised = raised or exc
        if raised is None and all(is_missing(g) for g in got):
            return NOT_ATTEMPTED, ("your function returns nothing yet; write its body and run "
                                     "the cell again.")
        compare = self.compare
        count(sum(_all_same(compare, [g], [e]) for g, e in zip(got, expected, strict=True)),
              len(cases))
        if raised is not None:
            return FAIL, f"your function raised {type(raised).__name__}: {raised}"
        for i, (g, e) in enumerate(zip(got, expected, strict=True)):
            try:
                value = compare.coerce(g)
            except AnswerTypeError as exc:
                return FAIL, f"on test case {i + 1} your function returned the wrong kind of value: {exc}"
            if compare.same(value, e):
                continue
            for wrong, values in zip(question.wrong, known, strict=True):
                if _all_same(compare, got, values):
                    return FAIL, f"your function behaves like a known mistake: {wrong.feedback}"
            hint = f" Hint: {question.hint}" if question.hint else ""
            return FAIL, (f"test case {i + 1}: got {compare.show(value)}, expected "
                            f"{compare.show(e)}.{hint}")
        return PASS, f"right on all {len(cases)} test cases. {question.explain}".strip()


def _all_same(compare, got, expected):
    try:
        return all(compare.same(compare.coerce(g), e) for g, e in zip(got, expected, strict=True))
    except AnswerTypeError:
        return False

