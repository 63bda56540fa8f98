"""Start an untrusted process tree under limits, and afterwards kill every process it started.

A :class:`Tree` starts one command (the notebook runner, a code worker) as the leader of a new
session, with resource limits set in the child before it executes anything, inherited by all it
starts: CPU seconds (RLIMIT_CPU), address space (RLIMIT_AS), file size (RLIMIT_FSIZE), no core
files and, for a user other than root, the number of processes (RLIMIT_NPROC; root ignores it).

Killing finds the tree's processes three ways, so that a detached process (``setsid``, double
fork, its environment cleared) does not outlive it:

* the descendants of the leader, with this process a *child subreaper* while a tree is alive
  (Linux ``PR_SET_CHILD_SUBREAPER``): an orphan is re-parented here, not to init, and stays
  findable;
* the members of the leader's session and process group;
* where a cgroup file system is writable (root, or a delegated cgroup), the tree's own cgroup,
  which also caps the number of processes (``pids.max``) and is killed whole (``cgroup.kill``).

:func:`protections` says which of these apply on this machine.
"""
import ctypes
import os
import resource
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

_PR_SET_CHILD_SUBREAPER = 36


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

def _prctl_subreaper(on):
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


_live_trees = set()


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

    def enter(self):
        """Move the calling process in (runs in the child, before exec)."""
        for d in self.dirs:
            try:
                with open(d / "cgroup.procs", "w") as f:
                    f.write(str(os.getpid()))
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
        self.limits = limits
        self.cgroups = _Cgroups(limits.processes)
        self._before = {pid for pid, (ppid, *_r) in _processes().items() if ppid == os.getpid()}
        self._nproc = None if os.geteuid() == 0 else _user_process_count() + limits.processes
        _live_trees.add(self)
        _prctl_subreaper(True)
        try:
            self.popen = subprocess.Popen(argv, start_new_session=True, close_fds=True,
                                          preexec_fn=self._in_child, **popen_kwargs)
        except BaseException:
            self._release()
            raise
        self.pid = self.popen.pid

    def _in_child(self):
        self.cgroups.enter()
        lim = self.limits
        for which, value in ((resource.RLIMIT_CPU, lim.cpu_seconds),
                             (resource.RLIMIT_AS, lim.memory_bytes),
                             (resource.RLIMIT_FSIZE, lim.file_bytes),
                             (resource.RLIMIT_CORE, 0)):
            resource.setrlimit(which, (value, value))
        if self._nproc is not None:
            resource.setrlimit(resource.RLIMIT_NPROC, (self._nproc, self._nproc))

    def members(self):
        """Pids of the tree's live (not zombie) processes, the leader included."""
        table = _processes()
        roots = {self.pid} if self.pid in table else set()
        roots |= {pid for pid, (ppid, *_r) in table.items()
                  if ppid == os.getpid() and pid not in self._before
                  and not any(pid == t.pid for t in _live_trees if t is not self)}
        ours = roots | _descendants(table, roots) | self.cgroups.members()
        ours |= {pid for pid, (_pp, pgid, sid, _s) in table.items() if self.pid in (pgid, sid)}
        ours.discard(os.getpid())
        return {pid for pid in ours if pid in table and table[pid][3] != "Z"}

    def kill(self):
        """SIGKILL every process of the tree, until none is left; reap what was re-parented here."""
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
        self._reap()
        self._release()

    def _reap(self):
        for pid, (ppid, *_r) in _processes().items():
            if ppid == os.getpid() and pid not in self._before and pid != self.pid:
                try:
                    os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    pass

    def _release(self):
        self.cgroups.remove()
        _live_trees.discard(self)
        if not _live_trees:
            _prctl_subreaper(False)


def describe_exit(returncode):
    """Why a process ended, from its return code, in words."""
    if returncode is None:
        return "still running"
    if 128 < returncode < 128 + 65:     # a shell's or bubblewrap's way to report a signal
        return f"exit status {returncode} ({describe_exit(128 - returncode)})"
    if returncode >= 0:
        return f"exit status {returncode}"
    sig = -returncode
    reason = {signal.SIGKILL: " (killed: out of memory, or by another process)",
              signal.SIGXCPU: " (its CPU time limit)", signal.SIGXFSZ: " (its file size limit)",
              signal.SIGSEGV: " (a crash)"}.get(sig, "")
    return f"signal {signal.Signals(sig).name}{reason}" if sig in signal.valid_signals() \
        else f"signal {sig}"


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
    if sys.platform.startswith("linux") and _prctl_subreaper(bool(_live_trees)):
        lines.append("cleanup: the session, the process group and every descendant, detached "
                     "ones included (child subreaper)")
    else:
        lines.append("cleanup: the session and process group only (no child subreaper here)")
    return lines
