"""A cgroup per notebook, so that its limits hold as root (RLIMIT_NPROC does not bind root, and
RLIMIT_AS is per process): ``pids.max`` bounds the processes of the whole tree, and a memory
limit bounds everything it holds, its memory file systems (tmpfs pages are charged to the
cgroup of the process that writes them) included.

:func:`make` tries cgroup v2 (a ``cgroup2`` mount whose controllers include pids and memory),
then v1 (the ``pids`` and ``memory`` hierarchies, as on a hybrid host); it makes the group
under the grader's own cgroup in each and says why when it cannot (no such controller, not
writable: an unprivileged user or a read-only /sys). A process joins by writing its pid into
each ``cgroup.procs`` (:meth:`Group.join`, in the child before it runs anything); :meth:`Group.close`
kills what is left and removes the group.
"""
import os
import signal
import time
import uuid
from pathlib import Path

MOUNTS = "/proc/self/mountinfo"
OWN = "/proc/self/cgroup"


class Unavailable(RuntimeError):
    """No cgroup can be made here, and why."""


def _mounts():
    """[(mount point, file system type, super options)] of the cgroup file systems."""
    found = []
    for line in Path(MOUNTS).read_text().splitlines():
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
            found.append((fields[4], tail[0], set(tail[2].split(","))))
    return found


def _own():
    """{controller or '' (v2): the grader's cgroup path in that hierarchy}."""
    paths = {}
    for line in Path(OWN).read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for c in controllers.split(",") if controllers else [""]:
            paths[c] = path
    return paths


class Group:
    """One notebook's cgroup: its folders (one per hierarchy) and the files a member writes."""

    def __init__(self, folders, version):
        self.folders, self.version = folders, version

    def join(self):
        """Move the calling process into the group (called in the child, before exec)."""
        pid = str(os.getpid()).encode()
        for folder in self.folders:
            fd = os.open(os.path.join(folder, "cgroup.procs"), os.O_WRONLY)
            try:
                os.write(fd, pid)
            finally:
                os.close(fd)

    def members(self):
        """The pids in the group now."""
        pids = set()
        for folder in self.folders:
            try:
                pids |= {int(p) for p in Path(folder, "cgroup.procs").read_text().split()}
            except OSError:
                pass
        return pids

    def close(self):
        """Kill every process still in the group, then remove it (a group stays busy a moment
        after its last process is killed: tried for up to 5 s). Safe to call twice."""
        deadline = time.monotonic() + 5
        while self.folders and time.monotonic() < deadline:
            for pid in self.members():
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            for folder in list(self.folders):
                try:
                    os.rmdir(folder)
                    self.folders.remove(folder)
                except FileNotFoundError:
                    self.folders.remove(folder)
                except OSError:
                    time.sleep(0.01)


def _write(folder, name, value):
    Path(folder, name).write_text(str(value))


def make(processes, memory_bytes):
    """A new :class:`Group` of at most ``processes`` processes and ``memory_bytes`` of memory
    (its memory file systems counted); :class:`Unavailable` says why none can be made."""
    name = f"gemmlab-grade-{uuid.uuid4().hex[:12]}"
    try:
        mounts, own = _mounts(), _own()
    except OSError as exc:
        raise Unavailable(f"cannot read this process's cgroups ({exc.strerror or exc})") from None
    why = []
    for point, kind, _ in mounts:
        if kind != "cgroup2":
            continue
        try:
            controllers = set(Path(point, "cgroup.controllers").read_text().split())
        except OSError:
            continue
        if not {"pids", "memory"} <= controllers:
            why.append(f"cgroup v2 at {point} lacks the pids and memory controllers")
            continue
        parent = Path(point) / own.get("", "/").lstrip("/")
        folder = parent / name
        try:
            enabled = set(Path(parent, "cgroup.subtree_control").read_text().split())
            if not {"pids", "memory"} <= enabled:
                _write(parent, "cgroup.subtree_control", "+pids +memory")
            folder.mkdir()
            _write(folder, "pids.max", processes)
            _write(folder, "memory.max", memory_bytes)
            if Path(folder, "memory.swap.max").exists():
                _write(folder, "memory.swap.max", 0)                    # no swapping out
            return Group([str(folder)], 2)
        except OSError as exc:
            why.append(f"cgroup v2 at {point}: {exc.strerror or exc}")
            Group([str(folder)], 2).close()
    v1 = {c: point for point, kind, options in mounts if kind == "cgroup"
          for c in ("pids", "memory") if c in options}
    if set(v1) == {"pids", "memory"}:
        folders = []
        try:
            for controller in ("pids", "memory"):
                folder = Path(v1[controller]) / own.get(controller, "/").lstrip("/") / name
                folder.mkdir()
                folders.append(str(folder))
            _write(folders[0], "pids.max", processes)
            _write(folders[1], "memory.limit_in_bytes", memory_bytes)
            if Path(folders[1], "memory.memsw.limit_in_bytes").exists():
                _write(folders[1], "memory.memsw.limit_in_bytes", memory_bytes)   # no swap out
            return Group(folders, 1)
        except OSError as exc:
            why.append(f"cgroup v1 ({', '.join(v1.values())}): {exc.strerror or exc}")
            Group(folders, 1).close()
    else:
        why.append("no cgroup v1 pids and memory hierarchies")
    raise Unavailable("; ".join(why))
