"""A verdict's status, and the two ways an answer can fail before it is compared: missing, or
of the wrong type. The labs, the answer kinds, ``check()`` and the grader all speak these; and
the tally of a run's cases (:func:`tallied`, :func:`count`), for partial credit."""
import contextvars
from contextlib import contextmanager

PASS, FAIL, NOT_ATTEMPTED = "pass", "fail", "not attempted"     # a verdict's status


def is_missing(answer):
    """``None`` and ``...`` (the exercise placeholder) mean "not attempted"."""
    return answer is None or answer is Ellipsis


class AnswerTypeError(Exception):
    """The answer has the wrong type or form; the message says what was expected."""


_TALLY = contextvars.ContextVar("tally", default=None)


@contextmanager
def tallied():
    """``with tallied() as tally:`` judge once; then ``tally`` is [cases passed, cases] of the
    run (the grader's partial credit), or [] where no case was judged (nothing to call, not
    attempted). Each kind counts every case of its run, past the first that fails."""
    tally = []
    token = _TALLY.set(tally)
    try:
        yield tally
    finally:
        _TALLY.reset(token)


def count(passed, cases):
    """Record a judging run's ``passed`` of ``cases`` for :func:`tallied` (if it listens)."""
    tally = _TALLY.get()
    if tally is not None:
        tally[:] = [int(passed), int(cases)]
