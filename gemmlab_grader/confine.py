"""Start an untrusted process tree under limits, and end it.

A :class:`Tree` starts one command (the notebook runner, a code worker, a kernel's compile),
normally bubblewrap around it (:mod:`.sandbox`), as the leader of a new session, with resource
limits set in the child before it runs anything and inherited by all it starts. Ending it kills
the session's process group; in the sandbox that kills bubblewrap, whose PID namespace takes
every process the notebook started with it, detached ones included. With ``--trusted`` nothing
is chased: a trusted notebook does not hide processes.
"""
import os
import resource
import signal
import subprocess
import threading
from dataclasses import dataclass

_lock = threading.Lock()
_live_trees = set()


@dataclass(frozen=True)
class Limits:
    """Per-process resource limits of an untrusted tree (each process gets the same)."""
    cpu_seconds: int = 900            # RLIMIT_CPU: the process is killed past it
    memory_bytes: int = 8 << 30       # RLIMIT_AS: address space; allocations past it fail
    file_bytes: int = 256 << 20       # RLIMIT_FSIZE: largest file a process may write
    processes: int = 512              # RLIMIT_NPROC above the user's count (not for root)

    def __post_init__(self):
        for name in ("cpu_seconds", "memory_bytes", "file_bytes", "processes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive whole number, got {value!r}")


def proc_stat(pid):
    """The fields of ``/proc/<pid>/stat`` after the command name (the state first); OSError,
    IndexError if unreadable."""
    with open(f"/proc/{pid}/stat", "rb") as f:
        return f.read().rsplit(b")", 1)[1].split()


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
        # computed here: the child runs no Python that could need a lock held when it forked
        self._rlimits = [(resource.RLIMIT_CPU, limits.cpu_seconds),
                         (resource.RLIMIT_AS, limits.memory_bytes),
                         (resource.RLIMIT_FSIZE, limits.file_bytes),
                         (resource.RLIMIT_CORE, 0)]
        if os.geteuid() != 0:
            self._rlimits.append((resource.RLIMIT_NPROC, _user_process_count() + limits.processes))
        self.popen = subprocess.Popen(argv, start_new_session=True, close_fds=True,
                                      preexec_fn=self._in_child, **popen_kwargs)
        self.pid = self.popen.pid
        with _lock:
            _live_trees.add(self)

    def _in_child(self):
        for which, value in self._rlimits:
            resource.setrlimit(which, (value, value))

    def kill(self):
        """SIGKILL the session's process group (in the sandbox: everything inside) and reap the
        leader. Safe to call twice."""
        for kill, target in ((os.killpg, self.pid), (os.kill, self.pid)):
            try:
                kill(target, signal.SIGKILL)
            except OSError:
                pass
        try:
            self.popen.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        with _lock:
            _live_trees.discard(self)


def kill_all():
    """Kill every live tree now (an interrupted run)."""
    with _lock:
        trees = list(_live_trees)
    for tree in trees:
        tree.kill()
