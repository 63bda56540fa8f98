"""``hint(question_id)``: the next hint of a lab's or puzzle's ladder
(:mod:`gemmlab.grading.hint_ladders`), and what a check adds after a failure.

The ladder goes from the idea to the structure to the step most students miss. When a failed
check's feedback names a mistake that a hint of the ladder is about, that hint comes next (the
others follow in order). The hints given so far are kept in the student's record
(:mod:`gemmlab.grading.student`), so a restarted kernel goes on where it stopped. A question
without a ladder offers its one-line hint from the bank, if it has one.
"""
import re

from ..judging import FAIL, NOT_ATTEMPTED
from . import student
from .bank import get_question
from .hint_ladders import LADDERS

LEVELS = ("the idea", "the structure", "the step most students miss")


def steps(question_id):
    """The hints of ``question_id`` in ladder order (its bank hint alone when it has no ladder)."""
    ladder = LADDERS.get(question_id)
    if ladder is not None:
        return list(ladder.steps)
    q = get_question(question_id)
    return [q.hint] if q.hint else []


def _state(record, question_id):
    return record["hints"].setdefault(question_id, {"given": [], "next": None})


def _next_index(state, count):
    if state["next"] is not None and state["next"] not in state["given"]:
        return state["next"]
    return next((i for i in range(count) if i not in state["given"]), None)


def left(question_id):
    """How many hints of ``question_id`` the student has not been given yet."""
    state = student.load()["hints"].get(question_id, {"given": []})
    return len([i for i in range(len(steps(question_id))) if i not in state["given"]])


def hint(question_id):
    """Print the next hint of ``question_id`` (or that none is left). Returns None, so that
    Jupyter shows the hint once, not again as the cell's value."""
    get_question(question_id)                  # an unknown id is a KeyError naming close ones
    texts = steps(question_id)
    record = student.load()
    state = _state(record, question_id)
    index = _next_index(state, len(texts))
    if index is None:
        message = (f"{question_id}: no hint left ({len(texts)} given). After trying, "
                   f"reveal({question_id!r}) shows the worked answer." if texts else
                   f"{question_id}: this question has no hints.")
        print(message)
        return None
    state["given"].append(index)
    state["next"] = None
    student.save(record)
    level = LEVELS[index] if index < len(LEVELS) and len(texts) > 1 else "hint"
    remaining = len(texts) - len(state["given"])
    print(f"Hint {len(state['given'])} of {len(texts)} for {question_id} ({level}): "
          f"{texts[index]}" + (f" ({remaining} more: hint({question_id!r}))" if remaining else ""))


def after_check(question_id, result):
    """What check() adds to a verdict: an attempt is noted in the student's record, and after a
    failure, how many hints are left (the one about the named mistake put first)."""
    if result.status == NOT_ATTEMPTED:
        return ""
    student.note_attempt(question_id)
    if result.status != FAIL or question_id not in LADDERS:
        return ""                   # (a value question's feedback already holds its one hint)
    record = student.load()
    state = _state(record, question_id)
    ladder = LADDERS.get(question_id)
    for pattern, index in (ladder.first_for if ladder else ()):
        if index not in state["given"] and re.search(pattern, result.feedback, re.I):
            state["next"] = index
            break
    student.save(record)
    remaining = left(question_id)
    if not remaining:
        return f" (No hint left: reveal({question_id!r}) shows the worked answer.)"
    about = " (the next one is about this mistake)" if state["next"] is not None else ""
    return (f" ({remaining} hint{'s' if remaining > 1 else ''} left: "
            f"hint({question_id!r}){about}.)")
