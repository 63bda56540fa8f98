"""The grader's sandbox, its one trust boundary: untrusted notebooks run inside bubblewrap
(``bwrap``) or not at all (:func:`missing` says why and how to get it). What a process sees
inside (:func:`command`; docs/grading.md): a read-only file system of the system, this Python and
the package copy; its work folder and /dev/shm as empty tmpfs; no network, no other process, no
capabilities; it dies with the grader.

A :class:`Tree` starts a command (bubblewrap around the notebook runner, a code worker, a
kernel's compile) as the leader of a new session, with :class:`Limits` set in the child before it
runs anything. Ending it kills the session's process group: bubblewrap, whose PID namespace takes
every process the notebook started with it, detached ones included.
"""
import functools
import os
import resource
import shutil
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import gemmlab

from . import cgroups

# the installed course package and this grader: never mounted (the sandbox gets copies)
PACKAGES = (Path(gemmlab.__file__).resolve().parent, Path(__file__).resolve().parent)
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime",
                "/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/alternatives",
                "/etc/fonts")
# No --new-session: the Tree's leader already has a session of its own, with no terminal, and
# bwrap's child (PID 1 inside) must stay in the leader's process group, where a kill reaches it.
OPTIONS = ("--unshare-all", "--die-with-parent", "--cap-drop", "ALL")
# As root with no cgroup: no user namespace (root's would map the user to root, whom RLIMIT_NPROC
# does not bind), and the command started by AS_USER, which alone may change its user, to the
# sandbox's own (no capability left after; the mounts are nosuid).
AS_ROOT = ("--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
           "--unshare-cgroup-try", "--die-with-parent", "--cap-drop", "ALL",
           "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID")
AS_USER = ("import os, sys; u = int(sys.argv[1]); os.setgroups([]); os.setgid(u); os.setuid(u); "
           "os.execv(sys.argv[2], sys.argv[2:])")


HOW_TO_GET_IT = (
    "Untrusted notebooks are graded only inside bubblewrap. To get it: Debian/Ubuntu "
    "`sudo apt install bubblewrap`, Fedora `sudo dnf install bubblewrap`. It needs unprivileged "
    "user namespaces: `sudo sysctl kernel.unprivileged_userns_clone=1` (Debian) or "
    "`user.max_user_namespaces=15000`, and on Ubuntu 24.04 AppArmor's "
    "`sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0`. On Windows grade in WSL2, "
    "on macOS in a Linux VM or container. Your own trusted notebooks (solutions/) can be graded "
    "without it: --trusted (no protection at all).")


@functools.lru_cache(maxsize=1)
def trial():
    """(path of a bubblewrap that works here, '') or (None, why not in words)."""
    path = shutil.which("bwrap")
    if path is None:
        return None, "bubblewrap (bwrap) is not installed (not on PATH)"
    try:
        done = subprocess.run([path, *OPTIONS, "--ro-bind", "/", "/", "--size", "1048576",
                               "--tmpfs", "/tmp", "--remount-ro", "/", "true"],
                              capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"{path} could not be run ({exc})"
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip()[-300:]
        return None, (f"{path} cannot start a sandbox here (exit status {done.returncode}"
                      f"{': ' + said if said else ''}; user namespaces turned off?)")
    return path, ""


def bwrap():
    """Path of a bubblewrap that works here (a trial run succeeds), else None."""
    return trial()[0]


def missing():
    """'' where the sandbox works, else why not and how to get it."""
    path, why = trial()
    return "" if path else f"{why}. {HOW_TO_GET_IT}"


def is_inside(path, folder):
    """Whether ``path`` is ``folder`` or lies under it."""
    path, folder = Path(path), Path(folder)
    return path == folder or folder in path.parents


def command(argv, workdir, readable=(), hidden=(), memory_bytes=1 << 30):
    """``argv`` wrapped in bwrap: ``workdir`` (its path as outside) and /dev/shm empty tmpfs of
    half ``memory_bytes`` each, the only writable places; ``readable`` and the Python read-only;
    ``hidden`` folders (and the installed packages, and their repository) not mounted, or masked
    when a mounted folder contains them. As root with no cgroup, ``argv`` runs as a user of its
    own (:func:`own_user`; its Tree sets RLIMIT_NPROC). Raises RuntimeError when bubblewrap is
    not available."""
    path = bwrap()
    if path is None:
        raise RuntimeError(missing())
    user = own_user() if os.geteuid() == 0 and _no_cgroup() else None
    if user is not None:
        argv = [sys.executable, "-I", "-S", "-c", AS_USER, str(user), *argv]
    # the installed packages and, for an editable install, their repository: always hidden
    checkouts = sorted({p.parent for p in PACKAGES if (p.parent / "pyproject.toml").exists()})
    hidden = [os.path.realpath(h) for h in [*hidden, *PACKAGES, *checkouts]]
    # this Python and its packages; then the module search path's other entries, but for those
    # that hold a course package or solutions/ (another checkout on PYTHONPATH: it gets the copy)
    mounts = sorted({os.path.realpath(d) for d in (sys.prefix, sys.base_prefix, sys.exec_prefix,
                     sys.base_exec_prefix, os.path.dirname(os.path.realpath(sys.executable)))
                     if os.path.isdir(d)})
    entries = [os.path.realpath(p) for p in sys.path if p and os.path.exists(p)]
    mounts += [p for p in entries if not any(is_inside(h, p) or is_inside(p, h) for h in hidden)
               and not any(os.path.isdir(os.path.join(p, name))
                           for name in ("gemmlab", "gemmlab_grader", "solutions"))
               and not any(is_inside(p, m) for m in mounts)]
    args = [path, *(OPTIONS if user is None else AS_ROOT)]
    for d in SYSTEM_DIRS:
        args += ["--ro-bind-try", d, d]
    for f in SYSTEM_FILES:
        args += ["--ro-bind-try", f, f]
    binds = mounts + [os.path.realpath(r) for r in readable]
    workdir, size = os.path.realpath(workdir), str(int(memory_bytes) // 2)
    if user is not None:        # the folders bubblewrap makes for its mounts: 0700 unless said
        for folder in sorted({str(a) for b in [*binds, workdir] for a in Path(b).parents} - {"/"}):
            args += ["--perms", "0755", "--dir", folder]
    for m in binds:
        args += ["--ro-bind", m, m]
    for h in hidden:
        if any(is_inside(h, m) for m in mounts) and os.path.isdir(h):
            args += ["--tmpfs", h]
    # the two memory file systems share the memory limit: together they hold at most that
    args += ["--dev", "/dev", "--proc", "/proc",
             "--perms", "1777", "--size", size, "--tmpfs", "/dev/shm",
             "--perms", "0700" if user is None else "1777", "--size", size, "--tmpfs", workdir,
             "--chdir", workdir,
             "--remount-ro", "/dev", "--remount-ro", "/", "--"]
    return args + list(argv)


_lock = threading.Lock()
_live_trees = set()


@dataclass(frozen=True)
class Limits:
    """Per-process resource limits of an untrusted tree (each process gets the same)."""
    cpu_seconds: int = 900            # RLIMIT_CPU: the process is killed past it
    memory_bytes: int = 8 << 30       # RLIMIT_AS: address space; allocations past it fail
    file_bytes: int = 256 << 20       # RLIMIT_FSIZE: largest file a process may write
    processes: int = 512              # the tree's cgroup's pids.max; without a cgroup,
                                      # RLIMIT_NPROC: above the user's count, or as root, of
                                      # a sandbox's user of its own (:func:`own_user`)

    def __post_init__(self):
        for name in ("cpu_seconds", "memory_bytes", "file_bytes", "processes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive whole number, got {value!r}")


def _process_users():
    """The user id of each process running now (one per process)."""
    users = []
    for entry in os.scandir("/proc"):
        try:
            if entry.name.isdigit():
                users.append(entry.stat().st_uid)
        except OSError:         # gone meanwhile
            pass
    return users


OWN_USERS = range(1_900_000_000, 2_000_000_000)     # no account's, no process's when drawn
_given = set()


def own_user():
    """A user id no process has and no sandbox of this run was given: as root with no cgroup, a
    sandbox's command runs as it (:func:`command`), so that RLIMIT_NPROC, which binds no root,
    counts its processes alone."""
    busy = set(_process_users())
    with _lock:
        while True:
            uid = OWN_USERS[int.from_bytes(os.urandom(4), "big") % len(OWN_USERS)]
            if uid not in busy and uid not in _given:
                _given.add(uid)
                return uid


@functools.lru_cache(maxsize=1)
def _no_cgroup():
    """Why no cgroup can be made here ('' while they can: the last failure is remembered)."""
    try:
        cgroups.make(1, 1 << 20).close()
    except cgroups.Unavailable as exc:
        return str(exc)
    return ""


def containment(limits):
    """How a tree's processes and memory are bounded in this run, in words."""
    if not _no_cgroup():
        return (f"a cgroup per notebook and per code worker: at most {limits.processes} "
                f"processes, {limits.memory_bytes >> 20} MiB of memory in all, its memory file "
                f"systems included")
    processes = (f"at most {limits.processes} in a sandbox, which runs as a user of its own "
                 f"(RLIMIT_NPROC; NOT limited with --trusted)" if os.geteuid() == 0
                 else f"at most {limits.processes} more of this user's")
    return (f"no cgroup ({_no_cgroup()}); processes: {processes}; memory: "
            f"{limits.memory_bytes >> 20} MiB of address space per process, its two memory file "
            f"systems {limits.memory_bytes >> 20} MiB together")


class Tree:
    """``Tree(argv, limits, cwd=..., env=..., stdin=..., stdout=..., stderr=...)``: the started
    process tree (``.popen`` is its leader), in a cgroup of its own where one can be made
    (:mod:`~gemmlab_grader.cgroups`); else RLIMIT_NPROC bounds it (as root: a ``sandboxed`` one,
    whose :func:`command` runs it as a user of its own); :meth:`kill` ends it."""

    def __init__(self, argv, limits=Limits(), sandboxed=False, **popen_kwargs):
        self.group = None if _no_cgroup() else cgroups.make(limits.processes, limits.memory_bytes)
        # computed here: the child runs no Python that could need a lock held when it forked
        self._rlimits = [(resource.RLIMIT_CPU, limits.cpu_seconds),
                         (resource.RLIMIT_AS, limits.memory_bytes),
                         (resource.RLIMIT_FSIZE, limits.file_bytes),
                         (resource.RLIMIT_CORE, 0)]
        if self.group is None and os.geteuid() != 0:
            mine = _process_users().count(os.getuid())
            self._rlimits.append((resource.RLIMIT_NPROC, mine + limits.processes))
        elif self.group is None and sandboxed:      # root's bubblewrap, a user of its own in it
            self._rlimits.append((resource.RLIMIT_NPROC, limits.processes))
        try:
            self.popen = subprocess.Popen(argv, start_new_session=True, close_fds=True,
                                          preexec_fn=self._in_child, **popen_kwargs)
        except BaseException:
            if self.group is not None:
                self.group.close()
            raise
        with _lock:
            _live_trees.add(self)

    def _in_child(self):
        if self.group is not None:
            self.group.join()
        for which, value in self._rlimits:
            resource.setrlimit(which, (value, value))

    def kill(self):
        """SIGKILL the session's process group (in the sandbox: everything inside) and reap the
        leader. Safe to call twice."""
        for kill in (os.killpg, os.kill):
            try:
                kill(self.popen.pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            self.popen.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        if self.group is not None:
            self.group.close()
        with _lock:
            _live_trees.discard(self)


def kill_all():
    """Kill every live tree now (an interrupted run)."""
    with _lock:
        trees = list(_live_trees)
    for tree in trees:
        tree.kill()
