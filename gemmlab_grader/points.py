"""What each question counts: the bank's default by kind (``Question.points``: a lab 5, other
code 3, a value 2, a choice 1), or the instructor's own, from a small file given with
``--points FILE``, JSON (``{"07.lab_ring": 10}``) or TOML (``"07.lab_ring" = 10``). A question
not in the file keeps its default; a lesson-wide ``"07" = 2`` sets every question of lesson 07
that the file does not name itself.
"""
import json
import tomllib
from pathlib import Path

from gemmlab.grading.bank import lesson_questions

MAX_FILE = 1 << 20


class PointsError(ValueError):
    """A points file that cannot be used, with what is wrong in it."""


def table(bank, overrides=None):
    """{question id: points} for every question of ``bank``, ``overrides`` applied."""
    overrides = overrides or {}
    by_lesson = {k: v for k, v in overrides.items() if "." not in k}
    return {q.id: overrides.get(q.id, by_lesson.get(q.lesson, q.points)) for q in bank.values()}


def read(path, bank):
    """The overrides in the file at ``path`` ({question id or lesson: points}), checked against
    ``bank``: PointsError names an unknown question, a bad number or a file that is not JSON or
    TOML."""
    path = Path(path)
    try:
        if path.stat().st_size > MAX_FILE:
            raise PointsError(f"{path}: larger than {MAX_FILE >> 10} KiB; a points file holds "
                              f"one line per question")
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PointsError(f"{path}: cannot be read ({getattr(exc, 'strerror', None) or exc})") \
            from None
    try:
        data = json.loads(text) if path.suffix.lower() == ".json" else tomllib.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        kind = "JSON" if path.suffix.lower() == ".json" else "TOML"
        raise PointsError(f"{path}: not {kind} ({exc})") from None
    if not isinstance(data, dict):
        raise PointsError(f"{path}: expected a table of question id -> points, got "
                          f"{type(data).__name__}")
    for key, value in data.items():
        known = key in bank if "." in key else bool(lesson_questions(key))
        if not known:
            raise PointsError(f"{path}: {key!r} is no question or lesson of the bank (a question "
                              f"is named like '07.lab_ring', a lesson like '07')")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1000:
            raise PointsError(f"{path}: {key} = {value!r}; expected a number of points from 0 "
                              f"to 1000")
    return dict(data)


def show(value):
    """Points as people write them: 5, 2.5."""
    return f"{value:g}" if isinstance(value, float) else str(value)
