"""Judging next to the student's code, without the references.

Some kinds must run the student's code in their own instrumented setting (a kernel on the
simulator), so they judge in the process that holds the code, not in the one that holds the
bank. There the question travels as its public fields only (:func:`public_fields`) and its
reference is :func:`no_reference`: the grader's code worker and the GPU labs' check on the
simulator (:mod:`gemmlab.judging.on_simulator`) both judge this way.
"""
import numpy as np

from .question import Question
from .verdict import FAIL, AnswerTypeError

PUBLIC_FIELDS = ("id", "prompt", "hint", "explain", "answer_name")


def public_fields(question):
    """What of ``question`` travels to the process that runs the code: no reference, no wrong
    answers."""
    return {name: getattr(question, name) for name in PUBLIC_FIELDS}


def no_reference(*args, **kwargs):
    """A question's ``answer`` in a process that runs a student's code."""
    raise RuntimeError("the reference answers are not available next to the student's code")


def judge_without_reference(kind, fields, fn, seed=None):
    """(status, feedback, picture) of ``kind`` on the student's ``fn`` for the question
    ``fields`` describe (:data:`PUBLIC_FIELDS`): its public cases when ``seed`` is None, else
    hidden cases drawn from ``np.random.default_rng(seed)``. A wrong type is a FAIL with its
    message. ``picture``: what a kernel lab's judge returns besides its verdict, the plain data of
    the run (:mod:`gemmlab.labs.observed`), else None."""
    question = Question(answer=no_reference, kind=kind, **fields)
    rng = None if seed is None else np.random.default_rng(seed)
    picture = None
    try:
        status, feedback, *picture = kind.judge(question, kind.coerce(fn), rng)
        picture = picture[0] if picture else None
    except AnswerTypeError as exc:
        status, feedback = FAIL, f"{exc}."
    return str(status), str(feedback)[:4000], picture
