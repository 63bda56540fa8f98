"""Folders the grader reads without trusting what is in them (the submissions): :class:`Scan`
walks them, :class:`FolderSnapshot` reads their notebooks before any notebook runs.

Everything here works through open folder descriptors (``dir_fd``), never follows a link, never
opens a FIFO or a device, and never recurses in Python: 3000 nested folders, a path longer than
PATH_MAX, a folder replaced by a file or a link are ordinary cases, not a crash.
"""
import os
import stat
from collections import namedtuple
from pathlib import Path


MAX_DEPTH = 32
MAX_ENTRIES = 200_000
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC

Entry = namedtuple("Entry", "rel stat dir_fd name")   # dir_fd: valid during the iteration only


class Scan:
    """``for entry in Scan(root): ...`` yields an :class:`Entry` for everything under ``root``
    (folders before their contents, names sorted), at most ``max_depth`` folders down and
    ``max_entries`` in all; ``truncated`` is then True. OSError if ``root`` is not a folder (a
    link to one is not followed)."""

    def __init__(self, root, max_depth=MAX_DEPTH, max_entries=MAX_ENTRIES):
        self.root, self.max_depth, self.max_entries = root, max_depth, max_entries
        self.truncated = False

    def __iter__(self):
        stack = [(os.open(self.root, _DIR_FLAGS), "")]
        names = [iter(sorted(os.listdir(stack[0][0])))]
        count = 0
        try:
            while stack:
                fd, prefix = stack[-1]
                name = next(names[-1], None)
                if name is None:
                    os.close(stack.pop()[0])
                    names.pop()
                    continue
                try:
                    info = os.stat(name, dir_fd=fd, follow_symlinks=False)
                except OSError:
                    continue                      # gone meanwhile, or unreadable
                count += 1
                if count > self.max_entries:
                    self.truncated = True
                    return
                yield Entry(prefix + name, info, fd, name)
                if stat.S_ISDIR(info.st_mode):
                    if len(stack) > self.max_depth:
                        self.truncated = True
                        continue
                    try:
                        sub = os.open(name, _DIR_FLAGS, dir_fd=fd)
                        listing = sorted(os.listdir(sub))
                    except OSError:
                        continue
                    stack.append((sub, f"{prefix}{name}/"))
                    names.append(iter(listing))
        finally:
            for fd, _prefix in stack:
                os.close(fd)


def read_at(dir_fd, name, limit):
    """Up to ``limit + 1`` bytes of the regular file ``name`` in ``dir_fd`` (so that a longer file
    shows), None if it is not a regular file: a link is not followed, a FIFO does not block."""
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return f.read(limit + 1)


Saved = namedtuple("Saved", "kind size data mtime")  # data: a regular file's bytes, or None


class FolderSnapshot:
    """The entries under ``root`` that ``wanted(relative path)`` accepts (the notebooks), read
    once, before any notebook runs: ``entries`` is {relative path: :class:`Saved`}, whose data
    is None for anything but a regular file of at most ``max_file`` bytes."""

    def __init__(self, root, max_file=32 << 20, max_depth=MAX_DEPTH,
                 wanted=lambda rel: rel.endswith(".ipynb")):
        self.root, self.entries = Path(root), {}
        for e in Scan(root, max_depth):
            if not wanted(e.rel):
                continue
            mode, data = e.stat.st_mode, None
            kind = ("dir" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode)
                    else "link" if stat.S_ISLNK(mode) else "other")
            if kind == "file" and e.stat.st_size <= max_file:
                try:
                    data = read_at(e.dir_fd, e.name, max_file)
                except OSError:
                    pass
                data = data if data is not None and len(data) <= max_file else None
            self.entries[e.rel] = Saved(kind, e.stat.st_size, data, e.stat.st_mtime)
