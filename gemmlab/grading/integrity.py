"""What the grader keeps from the student's code: its own package, and the Python it runs on.

:class:`PackageSnapshot` reads the gemmlab package into memory before any submission runs. From it
the grader writes the copies untrusted processes import (:meth:`PackageSnapshot.write_copy`, with
the bank's references withheld) and, after each submission, puts the installed package back as
it was (:meth:`PackageSnapshot.restore`): a cell that patched ``gemmlab/grading/checker.py``
changes nothing and leaves no trace, and its submission is marked.

:class:`EnvironmentWatch` notices that this Python's files (NumPy, the standard library, ...)
changed during the run: those cannot be put back from memory, so the grader distrusts the run.
With ``--sandbox`` both are mounted read-only and neither can happen.
"""
import json
import os
from collections import namedtuple
from pathlib import Path

import gemmlab

from .sandbox import _inside, _python_dirs

PACKAGE = Path(gemmlab.__file__).resolve().parent
WITHHELD_BANK = "grading/bank"


def _is_cache(rel):
    return "__pycache__" in Path(rel).parts or rel.endswith((".pyc", ".pyo"))


def walk(root, folders=False):
    """Relative paths of the regular files and symlinks under ``root`` (links are not followed),
    and of its folders too with ``folders``; nothing if ``root`` is no folder."""
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files + [d for d in dirs
                                    if folders or os.path.islink(os.path.join(folder, d))]):
            yield os.path.relpath(os.path.join(folder, name), root)


FileState = namedtuple("FileState", "size mtime_ns ctime_ns ino")


def file_state(path):
    """The :class:`FileState` of ``path`` itself (a link is not followed), None if it cannot be
    read: any write, replacement, chmod or rename there changes it (the ctime at least)."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return FileState(st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


class PackageSnapshot:
    """The package's source files, byte for byte, and the stats of its bytecode caches."""

    def __init__(self, root=PACKAGE):
        self.root = Path(root)
        self.files, self.caches = {}, {}
        for rel in walk(self.root):
            path = self.root / rel
            if _is_cache(rel):
                self.caches[rel] = file_state(path)
            elif not path.is_symlink():
                self.files[rel] = path.read_bytes()

    def write_copy(self, dest, public_questions=None):
        """Write the package under ``dest/gemmlab``; with ``public_questions``
        ([{"id", "prompt", "answer_name"}]) the bank's lesson modules are replaced by stubs that
        know only those fields (see :mod:`gemmlab.grading.withheld_bank`). Returns ``dest``."""
        target = Path(dest) / "gemmlab"
        for rel, data in self.files.items():
            if public_questions is not None and rel.startswith(WITHHELD_BANK + "/") \
                    and rel != WITHHELD_BANK + "/__init__.py":
                continue
            _write(target / rel, data)
        if public_questions is not None:
            bank = target / WITHHELD_BANK
            _write(bank / "public.json", json.dumps(public_questions).encode())
            for lesson in sorted({q["id"][:2] for q in public_questions}):
                _write(bank / f"l{lesson}.py", (
                    f'"""Lesson {lesson} without its references (see grading/withheld_bank.py)."""\n'
                    f"from ..withheld_bank import questions_of\n\n"
                    f'QUESTIONS = questions_of("{lesson}")\n').encode())
        return Path(dest)

    def restore(self):
        """Put the installed package back as it was; the relative paths that had changed."""
        changed = []
        present = set(walk(self.root))
        for rel in sorted(present):
            path = self.root / rel
            if _is_cache(rel):
                if self.caches.get(rel) != file_state(path):
                    path.unlink(missing_ok=True)          # a cache is rebuilt from the source
                    changed.append(rel)
            elif rel not in self.files or path.is_symlink():
                path.unlink(missing_ok=True)
                changed.append(rel)
        for rel, data in self.files.items():
            path = self.root / rel
            try:
                same = path.read_bytes() == data
            except OSError:
                same = False
            if not same:
                _write(path, data)
                changed.append(rel)
        return sorted(set(changed))


def _write(path, data, mode=0o644):
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() or path.is_symlink():
        path.unlink()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


class EnvironmentWatch:
    """Stats of every file of this Python (prefixes, standard library, site-packages, their
    bytecode caches) except the gemmlab package itself; :meth:`changed` gives what differs since.
    Untrusted processes run with PYTHONDONTWRITEBYTECODE and the grader sets
    ``sys.dont_write_bytecode`` while it grades, so nothing legitimate writes there."""

    def __init__(self):
        dirs = _python_dirs()
        # a folder inside another (the prefix's bin/) is walked with it, not twice
        self.dirs = sorted(d for d in dirs if not any(o != d and _inside(d, o) for o in dirs))
        self.state = self._signature()

    def _signature(self):
        sig, package = {}, f"{PACKAGE}{os.sep}"
        for d in self.dirs:
            for rel in walk(d):
                path = os.path.join(d, rel)
                if path.startswith(package):
                    continue
                state = file_state(path)
                if state is not None:
                    sig[path] = state
        return sig

    def changed(self):
        """{path: its FileState now, None if gone} of each file that changed, in path order."""
        now = self._signature()
        return {p: now.get(p) for p in sorted(set(now) | set(self.state))
                if now.get(p) != self.state.get(p)}
