"""What the grader keeps from the student's code: its packages, and the Python it runs on.

:class:`PackageSnapshot` reads the gemmlab package and the grader's own (``gemmlab_grader``) into
memory before any submission runs. From it the grader writes the copies untrusted processes
import (:meth:`PackageSnapshot.write_copy`, with the bank's references withheld) and, after each
submission, puts the installed packages back as they were (:meth:`PackageSnapshot.restore`): a
cell that patched ``gemmlab/grading/checker.py`` changes nothing and leaves no trace, and its
submission is marked.

:class:`EnvironmentWatch` notices that this Python's files (NumPy, the standard library, ...)
changed during the run: those cannot be put back from memory, so the grader distrusts the run.
With ``--sandbox`` both are mounted read-only and neither can happen.
"""
import json
import os
from collections import namedtuple
from pathlib import Path

from .sandbox import PACKAGES, _inside, _python_dirs

WITHHELD_BANK = "gemmlab/grading/bank"


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
    """The source files of the packages at ``roots`` (gemmlab and the grader), byte for byte, and
    the stats of their bytecode caches. A file is named by its package folder's name and its path
    inside it: ``gemmlab/grading/checker.py``."""

    def __init__(self, roots=PACKAGES):
        self.roots = {Path(root).name: Path(root) for root in roots}
        self.files, self.caches = {}, {}
        for name, path in self._present():
            if _is_cache(name):
                self.caches[name] = file_state(path)
            elif not path.is_symlink():
                self.files[name] = path.read_bytes()

    def _present(self):
        """(name, path) of every file and link now in the packages."""
        for package, root in self.roots.items():
            for rel in walk(root):
                yield f"{package}/{rel}", root / rel

    def _path(self, name):
        package, rel = name.split("/", 1)
        return self.roots[package] / rel

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

    def restore(self):
        """Put the installed packages back as they were; the names of the files that had
        changed."""
        changed = []
        for name, path in sorted(self._present()):
            if _is_cache(name):
                if self.caches.get(name) != file_state(path):
                    path.unlink(missing_ok=True)          # a cache is rebuilt from the source
                    changed.append(name)
            elif name not in self.files or path.is_symlink():
                path.unlink(missing_ok=True)
                changed.append(name)
        for name, data in self.files.items():
            path = self._path(name)
            try:
                same = path.read_bytes() == data
            except OSError:
                same = False
            if not same:
                _write(path, data)
                changed.append(name)
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
    bytecode caches) except the gemmlab and grader packages themselves; :meth:`changed` gives what
    differs since.
    Untrusted processes run with PYTHONDONTWRITEBYTECODE and the grader sets
    ``sys.dont_write_bytecode`` while it grades, so nothing legitimate writes there."""

    def __init__(self):
        dirs = _python_dirs()
        # a folder inside another (the prefix's bin/) is walked with it, not twice
        self.dirs = sorted(d for d in dirs if not any(o != d and _inside(d, o) for o in dirs))
        self.state = self._signature()

    def _signature(self):
        sig, packages = {}, tuple(f"{p}{os.sep}" for p in PACKAGES)
        for d in self.dirs:
            for rel in walk(d):
                path = os.path.join(d, rel)
                if path.startswith(packages):
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
