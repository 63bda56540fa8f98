"""The packages a graded notebook imports, as a copy the sandbox mounts read-only
(:class:`PackageSnapshot`, read before any submission runs): the grader, and gemmlab whose bank's
``grading/bank/lNN.py`` are stubs calling :func:`questions_of` (from ``bank/public.json``):
``.prompt`` works, ``.answer`` raises, and ``check()`` says that the grader judges the answer.
The real bank stays in the grader's process.
"""
import importlib.util
import json
import os
import stat
from pathlib import Path

import gemmlab
from gemmlab.judging import NOT_ATTEMPTED, Question

from .folders import Scan
from .sandbox import PACKAGES

WITHHELD_BANK = "gemmlab/grading/bank"


class PackageSnapshot:
    """The source files of the packages at ``roots`` (gemmlab and the grader), byte for byte
    (links left out), each named by its package folder and its path inside it:
    ``gemmlab/grading/checker.py``; and ``bytecode``, name -> (mtime, .pyc) where Python's cache
    holds it (a sandbox writes none: each process compiled every module it imported)."""

    def __init__(self, roots=PACKAGES):
        self.files, self.bytecode = {}, {}
        for root in map(Path, roots):
            for entry in Scan(root, max_depth=64, max_entries=1_000_000):
                cache = "__pycache__" in entry.rel.split("/") or entry.rel.endswith(".pyc")
                if stat.S_ISREG(entry.stat.st_mode) and not cache:
                    name, path = f"{root.name}/{entry.rel}", root / entry.rel
                    self.files[name] = path.read_bytes()
                    if name.endswith(".py"):
                        self.bytecode[name] = _cached(path, entry.stat)

    def write_copy(self, dest, public_questions):
        """Write the packages under ``dest`` (``dest/gemmlab``, ``dest/gemmlab_grader``), the
        bank's lesson modules replaced by stubs that know only the ``public_questions``' fields
        ([{"id", "prompt", "answer_name"}]). Returns ``dest``."""
        target, bank = Path(dest), Path(dest) / WITHHELD_BANK
        for name, data in self.files.items():
            if not name.startswith(WITHHELD_BANK + "/") or name == WITHHELD_BANK + "/__init__.py":
                _write(target / name, data)
                if self.bytecode.get(name):         # the source's mtime, as its .pyc says
                    mtime, pyc = self.bytecode[name]
                    os.utime(target / name, (mtime, mtime))
                    _write(Path(importlib.util.cache_from_source(target / name)), pyc)
        _write(bank / "public.json", json.dumps(public_questions).encode())
        for lesson in sorted({q["id"][:2] for q in public_questions}):
            _write(bank / f"l{lesson}.py", (
                f'"""Lesson {lesson} without its references (see '
                f'gemmlab_grader/withheld_bank.py)."""\n'
                f"from gemmlab_grader.withheld_bank import questions_of\n\n"
                f'QUESTIONS = questions_of("{lesson}")\n').encode())
        return target


def _cached(path, info):
    """(mtime, bytes) of the .pyc Python keeps for the source ``path`` (stat ``info``) when it
    is this Python's and stamped with this source's mtime and size (PEP 552), else None."""
    try:
        pyc = Path(importlib.util.cache_from_source(path)).read_bytes()
    except OSError:
        return None
    stamp = (importlib.util.MAGIC_NUMBER + bytes(4) + (int(info.st_mtime) & 0xFFFFFFFF).to_bytes(
        4, "little") + (info.st_size & 0xFFFFFFFF).to_bytes(4, "little"))
    return (int(info.st_mtime), pyc) if pyc[:16] == stamp else None


def _write(path, data):
    """A file of the copy, in a folder of the grader's own that no notebook reaches."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


class Withheld:
    """The kind of every question of the withheld bank."""

    def coerce(self, answer):
        return answer

    def judge(self, question, answer, rng=None):
        return NOT_ATTEMPTED, ("not checked in this run: `gemmlab grade` collects this answer "
                               "and judges it itself.")


def withheld(*args, **kwargs):
    """A question's ``answer`` where the references are kept away from students' code."""
    raise RuntimeError("the reference answers are not available while a notebook is graded")


def questions_of(lesson):
    """The questions of ``lesson`` ("01") from ``bank/public.json``, without references."""
    bank = Path(gemmlab.__file__).parent / "grading" / "bank"
    public = json.loads((bank / "public.json").read_text())
    return [Question(id=q["id"], prompt=q["prompt"], answer=withheld, kind=Withheld(),
                     answer_name=q["answer_name"]) for q in public if q["id"][:2] == lesson]
