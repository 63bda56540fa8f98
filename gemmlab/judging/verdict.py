"""A verdict's status, and the two ways an answer can fail before it is compared: missing, or
of the wrong type. The labs, the answer kinds, ``check()`` and the grader all speak these."""

PASS, FAIL, NOT_ATTEMPTED = "pass", "fail", "not attempted"     # a verdict's status


def is_missing(answer):
    """``None`` and ``...`` (the exercise placeholder) mean "not attempted"."""
    return answer is None or answer is Ellipsis


class AnswerTypeError(Exception):
    """The answer has the wrong type or form; the message says what was expected."""
