"""Start an untrusted process tree under limits, and afterwards kill every process it started.

A :class:`Tree` starts one command (the notebook runner, a code worker) as the leader of a new
session, with resource limits set in the child before it executes anything, inherited by all it
starts: CPU seconds (RLIMIT_CPU), address space (RLIMIT_AS), file size (RLIMIT_FSIZE), no core
files and, for a user other than root, the number of processes (RLIMIT_NPROC; root ignores it).

Killing finds the tree's processes three ways, so that a detached process (``setsid``, double
fork, its environment cleared, its cgroup left) does not outlive it:

* the descendants of the leader, with this process a *child subreaper* (Linux
  ``PR_SET_CHILD_SUBREAPER``) for as long as a tree is alive or a :func:`reaping` block lasts (a
  grading run): an orphan is re-parented here, not to init, and stays findable; one that keeps
  forking to change its pid is chased through ``/proc/self/task/*/children``;
* the members of the leader's session and process group;
* where a cgroup file system is writable (root, or a delegated cgroup), the tree's own cgroup,
  which also caps the number of processes (``pids.max``) and is killed whole (``cgroup.kill``).

Trees may be started and killed from several threads at once (``gemmlab grade --jobs``): a lock
keeps each tree from taking another's processes for its own.
:func:`protections` says which of these apply on this machine.
"""
import os
import resource
import signal
import subprocess
import sys
import threading
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from gemmlab.judging.cell import describe_exit  # noqa: F401 (the grader's name for it)
from gemmlab.judging.reaping import child_pids as _children
from gemmlab.judging.reaping import end_children
from gemmlab.judging.reaping import set_subreaper as _prctl_subreaper


@dataclass(frozen=True)
class Limits:
    """Per-process resource limits of an untrusted tree (each process gets the same)."""
    cpu_seconds: int = 900            # RLIMIT_CPU: the process is killed past it
    memory_bytes: int = 8 << 30       # RLIMIT_AS: address space; allocations past it fail
    file_bytes: int = 256 << 20       # RLIMIT_FSIZE: largest file a process may write
    processes: int = 512              # cgroup pids.max, or RLIMIT_NPROC above the user's count

    def __post_init__(self):
        for name in ("cpu_seconds", "memory_bytes", "file_bytes", "processes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive whole number, got {value!r}")


# --- /proc ----------------------------------------------------------------------------------------

def proc_stat(pid):
    """The fields of ``/proc/<pid>/stat`` after the command name (the state first; the name is
    cut at its last ')': it may hold spaces and parentheses). OSError, IndexError if unreadable."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        return f.read().rsplit(b")", 1)[1].split()


def _processes():
    """{pid: (ppid, pgid, sid, state)} of every process this user can see."""
    table = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            fields = proc_stat(entry.name)
        except (OSError, IndexError):
            continue
        table[int(entry.name)] = (int(fields[1]), int(fields[2]), int(fields[3]),
                                  fields[0].decode())
    return table


def _descendants(table, roots):
    children = {}
    for pid, (ppid, *_rest) in table.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = set(), list(roots)
    while todo:
        pid = todo.pop()
        for child in children.get(pid, ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


# --- child subreaper ------------------------------------------------------------------------------

_lock = threading.RLock()       # guards _live_trees, starting a tree and telling whose a pid is
_live_trees = set()
_reaping = []                   # the children there were when each reaping() block began


def _hold_subreaper():
    if _live_trees or _reaping:
        _prctl_subreaper(True)
    else:
        _prctl_subreaper(False)


def _leaders():
    return {t.pid for t in _live_trees if t.pid is not None}


def _chase(keep, seconds=5.0, quiet=20):
    """SIGKILL and reap every child of this process not in ``keep`` (nor a live tree's leader)
    until none comes back (:func:`gemmlab.judging.reaping.end_children`)."""
    def spare():
        with _lock:
            return keep | _leaders()
    end_children(spare, seconds, quiet)


@contextmanager
def reaping():
    """Keep this process a child subreaper for the whole block (a grading run), between trees
    too, so that no orphan of a notebook reaches init; at the end, kill every process that was
    re-parented here meanwhile."""
    with _lock:
        before = _children() or set()
        _reaping.append(before)
        _hold_subreaper()
    try:
        yield
    finally:
        _chase(before)
        with _lock:
            _reaping.remove(before)
            _hold_subreaper()


def kill_all():
    """Kill every live tree now (an interrupted run)."""
    with _lock:
        trees = list(_live_trees)
    for tree in trees:
        tree.kill()


# --- cgroups --------------------------------------------------------------------------------------

def _cgroup_bases():
    """Directories under which a child cgroup of this process's cgroup would go: the cgroup2
    hierarchy and the cgroup1 ``pids`` hierarchy, where mounted."""
    try:
        own = {}
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            hier, controllers, path = line.split(":", 2)
            own["v2" if hier == "0" else controllers] = path
        mounts = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return []
    bases = []
    for line in mounts:
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3:
            continue
        root, point, fstype, options = fields[3], fields[4], tail[0], tail[2].split(",")
        key = "v2" if fstype == "cgroup2" else "pids" if fstype == "cgroup" and \
            "pids" in options else None
        path = own.get(key)
        if key and path is not None and (path + "/").startswith(root.rstrip("/") + "/"):
            bases.append(Path(point) / path[len(root.rstrip("/")):].lstrip("/"))
    return bases


class _Cgroups:
    """One fresh cgroup per hierarchy that lets us create one (possibly none)."""

    def __init__(self, processes):
        self.dirs = []
        name = f"gemmlab-{uuid.uuid4().hex[:12]}"
        for base in _cgroup_bases():
            try:
                (base / name).mkdir()
            except OSError:
                continue
            self.dirs.append(base / name)
            try:
                (base / name / "pids.max").write_text(str(processes))
            except OSError:
                pass

    def members(self):
        pids = set()
        for d in self.dirs:
            try:
                pids.update(int(p) for p in (d / "cgroup.procs").read_text().split())
            except OSError:
                pass
        return pids

    def kill(self):
        for d in self.dirs:
            try:
                (d / "cgroup.kill").write_text("1")
            except OSError:
                pass

    def remove(self):
        for d in self.dirs:
            for _ in range(50):
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)


def cgroups_available():
    probe = _Cgroups(1)
    ok = bool(probe.dirs)
    probe.remove()
    return ok


# --- the tree -------------------------------------------------------------------------------------

def _user_process_count():
    uid = os.getuid()
    count = 0
    for entry in os.scandir("/proc"):
        try:
            count += entry.name.isdigit() and entry.stat().st_uid == uid
        except OSError:
            pass
    return count


class Tree:
    """``Tree(argv, limits, cwd=..., env=..., stdin=..., stdout=..., stderr=...)``: the started
    process tree (``.popen`` is its leader); :meth:`kill` ends it."""

    def __init__(self, argv, limits=Limits(), **popen_kwargs):
        self.limits, self.pid = limits, None
        self.cgroups = _Cgroups(limits.processes)
        # what the child does before exec, computed here: the child runs no Python that could
        # need a lock another thread held when it forked
        self._procs = [str(d / "cgroup.procs").encode() for d in self.cgroups.dirs]
        nproc = None if os.geteuid() == 0 else _user_process_count() + limits.processes
        self._rlimits = [(resource.RLIMIT_CPU, limits.cpu_seconds),
                         (resource.RLIMIT_AS, limits.memory_bytes),
                         (resource.RLIMIT_FSIZE, limits.file_bytes),
                         (resource.RLIMIT_CORE, 0)]
        if nproc is not None:
            self._rlimits.append((resource.RLIMIT_NPROC, nproc))
        self._killed = threading.Lock()
        with _lock:
            self._before = _children()
            if self._before is None:
                self._before = {pid for pid, (ppid, *_r) in _processes().items()
                                if ppid == os.getpid()}
            _live_trees.add(self)
            _hold_subreaper()
            try:
                self.popen = subprocess.Popen(argv, start_new_session=True, close_fds=True,
                                              preexec_fn=self._in_child, **popen_kwargs)
            except BaseException:
                self._release()
                raise
            self.pid = self.popen.pid

    def _in_child(self):
        pid = str(os.getpid()).encode()
        for path in self._procs:
            try:
                fd = os.open(path, os.O_WRONLY)
                try:
                    os.write(fd, pid)
                finally:
                    os.close(fd)
            except OSError:
                pass
        for which, value in self._rlimits:
            resource.setrlimit(which, (value, value))

    def members(self):
        """Pids of the tree's live (not zombie) processes, the leader included."""
        with _lock:
            table = _processes()
            others = _leaders() - {self.pid}
            roots = {self.pid} if self.pid in table else set()
            roots |= {pid for pid, (ppid, *_r) in table.items()
                      if ppid == os.getpid() and pid not in self._before and pid not in others}
            ours = roots | _descendants(table, roots) | self.cgroups.members()
            ours |= {pid for pid, (_pp, pgid, sid, _s) in table.items() if self.pid in (pgid, sid)}
            ours -= others | {os.getpid()}
        return {pid for pid in ours if pid in table and table[pid][3] != "Z"}

    def kill(self):
        """SIGKILL every process of the tree, until none is left; reap what was re-parented here.
        Safe to call twice, from two threads."""
        with self._killed:
            if self not in _live_trees:
                return
            self.cgroups.kill()
            for _ in range(200):
                victims = self.members()
                if not victims:
                    break
                for pid in victims:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
                time.sleep(0.01)
                self._reap()
            try:
                self.popen.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
            _chase(self._before | {self.pid}, seconds=2.0)
            self._reap()
            self._release()

    def _reap(self):
        with _lock:
            others = _leaders()
        for pid in (_children() or set()) - self._before - others:
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass

    def _release(self):
        self.cgroups.remove()
        with _lock:
            _live_trees.discard(self)
            _hold_subreaper()


def protections(limits):
    """Lines saying which protections a :class:`Tree` gets on this machine."""
    lines = [f"limits per process: {limits.cpu_seconds} s of CPU, {limits.memory_bytes >> 20} MiB "
             f"of address space, files up to {limits.file_bytes >> 20} MiB, no core files"]
    if cgroups_available():
        lines.append(f"process count: at most {limits.processes} (cgroup pids.max); cleanup: the "
                     f"cgroup is killed whole")
    elif os.geteuid() != 0:
        lines.append(f"process count: at most {limits.processes} more (RLIMIT_NPROC); no "
                     f"writable cgroup")
    else:
        lines.append("process count: NOT limited (root without a writable cgroup)")
    if sys.platform.startswith("linux") and _prctl_subreaper(bool(_live_trees or _reaping)):
        lines.append("cleanup: the session, the process group and every descendant, detached "
                     "ones included (child subreaper)")
    else:
        lines.append("cleanup: the session and process group only (no child subreaper here)")
    return lines
