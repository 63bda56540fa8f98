"""The student's own record, kept in their student folder: which questions they tried, which
hints they were given and which worked answers they revealed.

It is one small JSON file, :data:`PROGRESS`, at the top of the student folder (``gemmlab work``
writes it empty). A notebook runs with its own folder as the working directory, so the record is
looked for there and one folder up (a notebook of ``work/exercises/`` finds
``work/gemmlab-progress.json``); ``GEMMLAB_STUDENT_DIR`` names the folder outright. Outside a
student folder (the repository's own ``exercises/``) nothing is written anywhere: the record then
lives in memory for this session only, so the repository never gets a student's file.
"""
import json
import os
from pathlib import Path

from .files import write_file

PROGRESS = "gemmlab-progress.json"
EMPTY = {"attempts": {}, "hints": {}, "revealed": []}

_memory = None          # the record when there is no student folder (this process only)


def folder():
    """The student folder, or None when the notebook does not run in one."""
    named = os.environ.get("GEMMLAB_STUDENT_DIR")
    if named:
        return Path(named)
    here = Path.cwd()
    for candidate in (here, here.parent):
        if (candidate / PROGRESS).is_file():
            return candidate
    return None


def start(work):
    """Write an empty record into the new student folder ``work`` (never over one)."""
    path = Path(work) / PROGRESS
    if not path.exists():
        write_file(path, json.dumps(EMPTY, indent=1) + "\n", mode=0o644)


def load():
    """The record: {"attempts": {qid: n}, "hints": {qid: {"given": [...], "next": i}},
    "revealed": [qid, ...]}."""
    global _memory
    where = folder()
    if where is None:
        if _memory is None:
            _memory = json.loads(json.dumps(EMPTY))
        return _memory
    try:
        data = json.loads((where / PROGRESS).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}
    record = json.loads(json.dumps(EMPTY))
    if isinstance(data, dict):
        record.update({k: data[k] for k in EMPTY if isinstance(data.get(k), type(EMPTY[k]))})
    return record


def save(record):
    global _memory
    where = folder()
    if where is None:
        _memory = record
        return
    write_file(where / PROGRESS, json.dumps(record, indent=1, sort_keys=True) + "\n", mode=0o644)


def attempted(question_id):
    """Whether the student has checked an answer (right or wrong) to ``question_id``."""
    return load()["attempts"].get(question_id, 0) > 0


def note_attempt(question_id):
    record = load()
    record["attempts"][question_id] = record["attempts"].get(question_id, 0) + 1
    save(record)


def note_reveal(question_id):
    record = load()
    if question_id not in record["revealed"]:
        record["revealed"].append(question_id)
        save(record)


def revealed():
    return list(load()["revealed"])
