"""What the grader keeps from the student's code: its packages, and the Python it runs on.

:class:`PackageSnapshot` reads the gemmlab package and the grader's own (``gemmlab_grader``) into
memory before any submission runs. From it the grader writes the copies untrusted processes
import (:meth:`PackageSnapshot.write_copy`, with the bank's references withheld) and, after each
submission, puts the installed packages back as they were (:meth:`PackageSnapshot.restore`),
comparing them by content: a cell that patched ``gemmlab/grading/checker.py`` changes nothing and
leaves no trace, and its submission is marked.

Bytecode caches (``__pycache__/*.pyc``) are judged by content too (:func:`faithful_bytecode`):
one that is exactly what this Python compiles from its source may have been written by any
process using the same files (other users of a shared interpreter do), and is no tampering; any
other is.

:class:`EnvironmentWatch` notices that the other files of this Python that graded code runs
(the standard library, NumPy, Numba, the kernel's IPython, ..., and the site folders' startup
hooks) changed during the run: those cannot be put back from memory, so the grader distrusts the
run. Packages nothing graded imports are not watched: on a shared machine others may install
or compile them meanwhile. :class:`ShmWatch` removes what a notebook left in the machine's /dev/shm.
The last two matter only with ``--no-sandbox``: in the sandbox all of this is read-only, and /dev/shm
is the notebook's own.
"""
import importlib.util
import json
import marshal
import os
import site
import stat
import sys
import sysconfig
from pathlib import Path

from .folders import Scan, remove_tree, state_of
from .sandbox import PACKAGES, is_inside, python_dirs

WITHHELD_BANK = "gemmlab/grading/bank"


def _is_cache(rel):
    return "__pycache__" in Path(rel).parts or rel.endswith((".pyc", ".pyo"))


def walk(root, folders=False, max_depth=64, max_entries=1_000_000):
    """Relative paths of the regular files and symlinks under ``root`` (links are not followed),
    and of its folders too with ``folders``; nothing if ``root`` is no folder."""
    try:
        for entry in Scan(root, max_depth, max_entries):
            if folders or not stat.S_ISDIR(entry.stat.st_mode):
                yield entry.rel
    except OSError:
        return


def faithful_bytecode(path):
    """Whether the bytecode cache at ``path`` is what this Python compiles from its source as the
    source is now: its header matches the source (time and size, or hash) and its code object
    equals a fresh compile. Caches of another Python version (another tag) are never loaded by
    this one: they count as faithful."""
    name = os.path.basename(path)
    if f".{sys.implementation.cache_tag}." not in name:
        return True
    try:
        source_path = importlib.util.source_from_cache(path)
        with open(path, "rb") as f:
            data = f.read(64 << 20)
        with open(source_path, "rb") as f:
            source = f.read()
        info = os.stat(source_path)
    except (OSError, ValueError, NotImplementedError):
        return False
    if data[:4] != importlib.util.MAGIC_NUMBER:
        return False
    flags = int.from_bytes(data[4:8], "little")
    if flags & 1:
        if data[8:16] != importlib.util.source_hash(source):
            return False
    elif (int.from_bytes(data[8:12], "little") != int(info.st_mtime) & 0xFFFFFFFF
          or int.from_bytes(data[12:16], "little") != info.st_size & 0xFFFFFFFF):
        return False
    level = name.split(".opt-")[1][0] if ".opt-" in name else "0"
    try:
        return marshal.loads(data[16:]) == compile(source, source_path, "exec",
                                                   dont_inherit=True, optimize=int(level))
    except (ValueError, TypeError, EOFError, SyntaxError, RecursionError, MemoryError):
        return False


def file_state(path):
    """The :class:`~gemmlab_grader.folders.State` of ``path`` itself (a link is not followed),
    None if it cannot be read: any write, replacement, chmod or rename there changes it (the
    ctime at least)."""
    try:
        return state_of(os.lstat(path))
    except OSError:
        return None


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
        changed, caches = [], []
        for name, path in sorted(self._present()):
            if _is_cache(name):
                caches.append((name, path))
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
        for name, path in caches:                 # against the sources as just put back
            now = file_state(path)
            if self.caches.get(name) == now:
                continue
            if not path.is_symlink() and faithful_bytecode(path):
                self.caches[name] = now           # another process compiled the same source
            else:
                path.unlink(missing_ok=True)      # a cache is rebuilt from the source
                changed.append(name)
        return sorted(set(changed))


def _write(path, data, mode=0o644):
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() or path.is_symlink():
        path.unlink()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


# What the graded processes import besides what the grader itself has loaded: the notebook
# kernel's stack (the runner starts an IPython kernel) and the course's numerical libraries.
KERNEL_PACKAGES = ("IPython", "ipykernel", "jupyter_client", "jupyter_core", "zmq", "tornado",
                   "traitlets", "comm", "matplotlib", "numpy", "numba", "llvmlite", "ml_dtypes",
                   "cuda", "mpi4py")
SITE_FOLDERS = ("site-packages", "dist-packages")


def _locations(name):
    """Where the top-level module or package ``name`` lives (its folders or its file), found
    without importing it; [] if it is not installed or is built in."""
    module = sys.modules.get(name)
    if module is not None:
        paths = list(getattr(module, "__path__", None) or [])
        origin = getattr(module, "__file__", None)
    else:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            return []
        if spec is None:
            return []
        paths, origin = list(spec.submodule_search_locations or []), spec.origin
    return paths or ([origin] if origin and os.path.isfile(origin) else [])


def watched_roots():
    """What the watch looks at: the standard library (without its site-packages), the folder or
    file of every top-level module this process has loaded and of :data:`KERNEL_PACKAGES`. Only
    inside this Python's own directories, and never the course's and the grader's packages (their
    snapshot restores them). The site folders' startup hooks are listed by the watch itself
    (:func:`startup_hooks`), so that new ones show."""
    inside = [os.path.realpath(d) for d in python_dirs()]
    packages = [os.path.realpath(p) for p in PACKAGES]
    roots = {os.path.realpath(sysconfig.get_paths()[key]) for key in ("stdlib", "platstdlib")}
    for name in {m.partition(".")[0] for m in list(sys.modules)} | set(KERNEL_PACKAGES):
        roots.update(os.path.realpath(p) for p in _locations(name))
    return sorted(r for r in roots if any(is_inside(r, d) for d in inside)
                  and not any(is_inside(r, p) or is_inside(p, r) for p in packages)
                  and not any(o != r and _walked_with(r, o) for o in roots))


def _walked_with(path, root):
    """Whether the watch's walk of ``root`` reaches ``path`` (it skips site folders)."""
    return is_inside(path, root) and not any(
        part in SITE_FOLDERS for part in Path(os.path.relpath(path, root)).parts)


def startup_hooks():
    """The files of this Python's site folders that every Python started here runs first:
    ``*.pth``, ``sitecustomize``, ``usercustomize``."""
    for folder in sorted({*site.getsitepackages(), site.getusersitepackages()}):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if name.endswith(".pth") or name.split(".")[0] in ("sitecustomize", "usercustomize"):
                yield os.path.join(folder, name)


class EnvironmentWatch:
    """Stats of the files of this Python that can change what a graded process computes
    (:func:`watched_roots`: not the whole environment, whose unrelated packages other users of
    a shared machine may install or compile meanwhile); :meth:`changed` gives what differs since,
    leaving out bytecode caches that are a faithful compile of their source
    (:func:`faithful_bytecode`: other processes sharing the interpreter write those). Startup
    hooks that appear in a site folder count: they run in every later process."""

    def __init__(self, roots=None):
        self.roots = watched_roots() if roots is None else [str(r) for r in roots]
        self.state = self._signature()

    def _signature(self):
        sig = {}
        for root in self.roots:
            if not os.path.isdir(root):
                state = file_state(root)
                if state is not None:
                    sig[root] = state
                continue
            # the stdlib's site-packages is not walked whole: its watched packages are roots
            try:
                for entry in Scan(root, 64, 1_000_000, skip=lambda name: name in SITE_FOLDERS):
                    if not stat.S_ISDIR(entry.stat.st_mode):
                        sig[os.path.join(root, entry.rel)] = state_of(entry.stat)
            except OSError:
                pass
        for path in startup_hooks():               # new ones included
            sig.setdefault(path, file_state(path))
        return sig

    def changed(self):
        """{path: its State now, None if gone} of each file that changed, in path order."""
        now = self._signature()
        return {p: now.get(p) for p in sorted(set(now) | set(self.state))
                if now.get(p) != self.state.get(p)
                and not (p.endswith(".pyc") and now.get(p) is not None and faithful_bytecode(p))}


class ShmWatch:
    """Without the sandbox a notebook shares the machine's /dev/shm, which is memory: what it
    leaves there stays until reboot. :meth:`clean`, after the notebook's processes are gone,
    removes what appeared since the last call, belongs to this user and no live process holds
    open or mapped (so a program of yours using /dev/shm meanwhile keeps its files)."""

    def __init__(self, folder="/dev/shm"):
        self.folder = folder
        self.before = self._entries()

    def _entries(self):
        try:
            with os.scandir(self.folder) as entries:
                return {(e.name, e.inode()) for e in entries
                        if e.stat(follow_symlinks=False).st_uid == os.geteuid()}
        except OSError:
            return set()

    def _held(self):
        """Paths under the folder that some process we can see holds open or mapped."""
        held, prefix = set(), self.folder.rstrip("/") + "/"
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                for fd in os.listdir(f"/proc/{pid}/fd"):
                    target = os.readlink(f"/proc/{pid}/fd/{fd}")
                    if target.startswith(prefix):
                        held.add(target[len(prefix):].split("/")[0])
                with open(f"/proc/{pid}/maps", "rb") as f:
                    for line in f.read().decode("utf-8", "replace").splitlines():
                        path = line.split(None, 5)[5:]
                        if path and path[0].startswith(prefix):
                            held.add(path[0][len(prefix):].split("/")[0])
            except OSError:
                continue
        return held

    def clean(self):
        """Remove what was left (see the class); [(name, bytes)] of what went."""
        new = sorted(name for name, _ino in self._entries() - self.before)
        removed = []
        if new:
            held = self._held()
            for name in new:
                if name in held:
                    continue
                size = _size(os.path.join(self.folder, name))
                try:
                    remove_tree(os.path.join(self.folder, name))
                    removed.append((name, size))
                except OSError:
                    pass
        self.before = self._entries()
        return removed


def _size(path):
    """Bytes under ``path`` (a file, or a folder's files to a bounded depth)."""
    try:
        info = os.lstat(path)
        if not stat.S_ISDIR(info.st_mode):
            return info.st_size
        return sum(e.stat.st_size for e in Scan(path) if stat.S_ISREG(e.stat.st_mode))
    except OSError:
        return 0
