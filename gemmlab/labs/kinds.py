"""What the distributed labs' question kinds share: the code-question protocol of
:mod:`gemmlab.judging` (verdicts from there; the student's function is run through
:func:`~gemmlab.judging.where.where_it_lives`, next to the code wherever that lives).

A kind has ``coerce(answer)`` (the answer must be a function) and ``judge(question, fn, rng)``:
with ``rng`` None it runs the public cases the notebook's ``check()`` uses (``cases()``); with a
NumPy Generator it draws hidden cases from it (``hidden(rng)``: other rank counts, sizes and
seeds). On hidden cases it runs every case, counts those right (:func:`~gemmlab.judging.verdict.count`, the
grader's partial credit) and names the first that fails. It never raises for the student's
code: an exception anywhere becomes a FAIL with the reason.
"""
from ..judging import FAIL, NOT_ATTEMPTED, PASS, AnswerTypeError, is_missing
from ..judging.verdict import count
from .ranks import numeric_array

__all__ = ["CodeLab", "NoAnswer", "as_array"]


class NoAnswer(Exception):
    """The student's function returned nothing (None or ...) on every rank: not attempted."""


def as_array(value, what):
    """``value`` as a float or integer NumPy array, or a ValueError naming ``what``."""
    if is_missing(value):
        raise ValueError(f"{what} returned nothing ({value!r})")
    arr = numeric_array(value)
    if arr is None or arr.dtype.kind == "c":
        raise ValueError(f"{what} returned {type(value).__name__} {str(value)[:60]!r}, not an "
                         f"array of numbers")
    return arr


class CodeLab:
    """Base of a lab kind: subclasses give the cases and ``check_case(fn, case)``."""
    function = "your function"          # how the feedback names the student's function
    proxy_judge = True                  # fn is only run through where_it_lives: the grader may
                                        # judge here and keep the code in a process of its own

    def coerce(self, answer):
        if not callable(answer):
            raise AnswerTypeError(f"expected a function (pass its name, without calling it), "
                                  f"got {type(answer).__name__}")
        return answer

    def cases(self):
        raise NotImplementedError

    def hidden(self, rng):
        raise NotImplementedError

    def describe(self, case):
        """How a case is named in the feedback, e.g. "on 4 ranks, 16 values each"."""
        raise NotImplementedError

    def check_case(self, fn, case):
        """(status, feedback) of one case."""
        raise NotImplementedError

    def summary(self, cases):
        return f"right on all {len(cases)} cases"

    def judge(self, question, fn, rng=None):
        cases = list(self.cases() if rng is None else self.hidden(rng))
        first, passed = None, 0
        for index, case in enumerate(cases):
            if first and rng is None:
                break                   # check(): the first failure says it all
            try:
                status, feedback = self.check_case(fn, case)
            except NoAnswer:
                if index == 0:
                    return NOT_ATTEMPTED, (f"{self.function} returns nothing yet: write its body "
                                           f"and run the cell again.")
                status, feedback = FAIL, f"{self.function} returned nothing"
            except Exception as exc:  # the student's values broke the check itself: a FAIL
                status, feedback = FAIL, f"{type(exc).__name__}: {exc}"
            passed += status == PASS
            if status != PASS and first is None:
                first = status, f"{self.describe(case)}: {feedback}"
        count(passed, len(cases))
        return first or (PASS, f"{self.summary(cases)}. {question.explain}".strip())
