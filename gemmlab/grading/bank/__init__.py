"""The question bank: one module per lesson (``lNN.py``), each defining ``QUESTIONS``.

Question ids are ``"NN.name"`` with NN the lesson number, so the grader knows which questions
belong to a lesson's exercise notebook.
"""
import dataclasses
import difflib
import importlib
import pkgutil

from ..allowed import ALLOWS

_bank = None


def _load():
    bank = {}
    for mod in sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name.startswith("l")):
        for q in importlib.import_module(f"{__name__}.{mod}").QUESTIONS:
            if q.id in ALLOWS:        # what its answer may do, declared in grading/allowed.py
                q = dataclasses.replace(q, allows=ALLOWS[q.id])
            if q.id in bank:
                raise RuntimeError(f"question id {q.id!r} is defined twice in the bank")
            if not q.id.startswith(mod[1:] + "."):
                raise RuntimeError(f"question {q.id!r} is in {mod}.py but its id names another lesson")
            bank[q.id] = q
    return bank


def questions():
    """Every question, by id."""
    global _bank
    if _bank is None:
        _bank = _load()
    return _bank


def get_question(question_id):
    bank = questions()
    if question_id not in bank:
        close = difflib.get_close_matches(str(question_id), bank, n=3)
        also = f" Did you mean {', '.join(close)}?" if close else ""
        raise KeyError(f"no question {question_id!r} in the bank.{also}")
    return bank[question_id]


def lesson_questions(lesson):
    """Ids of the questions of lesson ``lesson`` ("01" or 1), in bank order."""
    prefix = f"{int(lesson):02d}."
    return [qid for qid in questions() if qid.startswith(prefix)]
