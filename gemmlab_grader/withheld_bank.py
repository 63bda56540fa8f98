"""The packages a graded notebook imports: a copy of gemmlab whose bank has prompts and answer
names but no references, and of the grader.

:class:`PackageSnapshot` reads both installed packages into memory before any submission runs
and writes the copy the sandbox mounts read-only (:meth:`~PackageSnapshot.write_copy`; the
installed packages are never mounted, so nothing is ever put back). In the copy, the bank's
``grading/bank/lNN.py`` are stubs calling :func:`questions_of`, built from ``bank/public.json``:
``.prompt`` still works, ``.answer`` raises, and ``check()`` says that the grader judges the
answer. The real bank stays in the grader's process.
"""
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
    (links and bytecode caches left out), each named by its package folder and its path inside
    it: ``gemmlab/grading/checker.py``."""

    def __init__(self, roots=PACKAGES):
        self.files = {}
        for root in map(Path, roots):
            for entry in Scan(root, max_depth=64, max_entries=1_000_000):
                cache = "__pycache__" in entry.rel.split("/") or entry.rel.endswith(".pyc")
                if stat.S_ISREG(entry.stat.st_mode) and not cache:
                    self.files[f"{root.name}/{entry.rel}"] = (root / entry.rel).read_bytes()

    def write_copy(self, dest, public_questions=None):
        """Write the packages under ``dest`` (``dest/gemmlab``, ``dest/gemmlab_grader``); with
        ``public_questions`` ([{"id", "prompt", "answer_name"}]) the bank's lesson modules are
        replaced by stubs that know only those fields (see :mod:`gemmlab_grader.withheld_bank`).
        Returns ``dest``."""
        target = Path(dest)
        for name, data in self.files.items():
            if public_questions is not None and name.startswith(WITHHELD_BANK + "/") \
                    and name != WITHHELD_BANK + "/__init__.py":
                continue
            _write(target / name, data)
        if public_questions is not None:
            bank = target / WITHHELD_BANK
            _write(bank / "public.json", json.dumps(public_questions).encode())
            for lesson in sorted({q["id"][:2] for q in public_questions}):
                _write(bank / f"l{lesson}.py", (
                    f'"""Lesson {lesson} without its references (see '
                    f'gemmlab_grader/withheld_bank.py)."""\n'
                    f"from gemmlab_grader.withheld_bank import questions_of\n\n"
                    f'QUESTIONS = questions_of("{lesson}")\n').encode())
        return target


def _write(path, data, mode=0o644):
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() or path.is_symlink():
        path.unlink()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


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
