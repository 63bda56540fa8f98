"""The packages an untrusted process imports: :class:`PackageSnapshot` reads the gemmlab package
and the grader's own (``gemmlab_grader``) into memory before any submission runs, and writes the
copy the sandbox mounts read-only (:meth:`PackageSnapshot.write_copy`, with the bank's references
withheld). The installed packages are never mounted, so nothing is ever put back.
"""
import json
import os
import stat
from pathlib import Path

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
