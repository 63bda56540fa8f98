"""The packages a graded notebook imports, as a copy the sandbox mounts read-only
(:class:`PackageSnapshot`, read before any submission runs): the grader, and gemmlab whose bank's
``grading/bank/lNN.py`` are stubs calling :func:`questions_of` (from ``bank/public.json``):
``.prompt`` works, ``.answer`` raises, and ``check()`` says that the grader judges the answer.
The real bank stays in the grader's process.
"""
import json
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

    def write_copy(self, dest, public_questions):
        """Write the packages under ``dest`` (``dest/gemmlab``, ``dest/gemmlab_grader``), the
        bank's lesson modules replaced by stubs that know only the ``public_questions``' fields
        ([{"id", "prompt", "answer_name"}]). Returns ``dest``."""
        target, bank = Path(dest), Path(dest) / WITHHELD_BANK
        for name, data in self.files.items():
            if not name.startswith(WITHHELD_BANK + "/") or name == WITHHELD_BANK + "/__init__.py":
                _write(target / name, data)
        _write(bank / "public.json", json.dumps(public_questions).encode())
        for lesson in sorted({q["id"][:2] for q in public_questions}):
            _write(bank / f"l{lesson}.py", (
                f'"""Lesson {lesson} without its references (see '
                f'gemmlab_grader/withheld_bank.py)."""\n'
                f"from gemmlab_grader.withheld_bank import questions_of\n\n"
                f'QUESTIONS = questions_of("{lesson}")\n').encode())
        return target


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
