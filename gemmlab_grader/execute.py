"""Running one notebook in its confinement and reading back what it handed in.

The grader's side of :mod:`gemmlab_grader.runner` (the student's side):

1. the request and the notebook's bytes go into a file whose name is removed as soon as it is
   open, given to the runner as its standard input; its standard output is another such file:
   no working copy of a notebook, no result file has a name another process could find;
2. the runner runs under the notebook's limits (the sandbox unless told otherwise) until it ends,
   its total time runs out, or the run is interrupted; then its whole process tree is killed;
3. what it wrote is size-checked, then read (:mod:`gemmlab_grader.collect`).
"""
import io
import json
import os
import subprocess
import time

from . import collect, confine
from .isolate import start_confined

def unnamed_file(path, data=b""):
    """A descriptor of a new file holding ``data``, open for reading and writing, at offset 0,
    whose name ``path`` is already removed."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        os.unlink(path)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_fd(fd, limit):
    """Up to ``limit + 1`` bytes of the file ``fd`` from its start."""
    os.lseek(fd, 0, os.SEEK_SET)
    chunks, left = [], limit + 1
    while left > 0:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def wait(tree, seconds, stop):
    """Wait for ``tree``'s leader for up to ``seconds``; then kill the whole tree. '' if it ended
    by itself, else why not ('timeout' or 'interrupted')."""
    deadline = time.monotonic() + seconds
    try:
        while True:
            try:
                tree.popen.wait(timeout=min(1.0, max(0.01, deadline - time.monotonic())))
                return ""
            except subprocess.TimeoutExpired:
                if stop is not None and stop.is_set():
                    return "interrupted"
                if time.monotonic() >= deadline:
                    return "timeout"
    finally:
        tree.kill()


class NotebookRun:
    """One notebook's run: :meth:`execute`, then (the tree dead) :meth:`collect`."""

    def __init__(self, folder, isolation, stop=None):
        self.folder, self.isolation, self.stop = folder, isolation, stop
        self.output = None

    def execute(self, notebook, request, seconds):
        """Run the runner on ``notebook`` (bytes) with ``request``; '' if it ended normally, else
        why not (in words)."""
        request = dict(request, notebook_bytes=len(notebook))
        stdin = unnamed_file(self.folder / "in", collect.pack(json.dumps(request).encode())
                             + collect.pack(notebook))
        self.output = unnamed_file(self.folder / "out")
        workdir = self.folder / "work"
        workdir.mkdir()
        try:
            tree = start_confined(self.isolation, workdir, "gemmlab_grader.runner", workdir,
                                  stdin=stdin, stdout=self.output, stderr=subprocess.DEVNULL)
        finally:
            os.close(stdin)
        why = wait(tree, seconds, self.stop)
        if why == "timeout":
            return f"the notebook ran past {seconds} s and was stopped"
        if why:
            return "not graded: the run was interrupted"
        if tree.popen.returncode != 0:
            return (f"the notebook's runner ended with "
                    f"{confine.describe_exit(tree.popen.returncode)} (did the notebook kill its "
                    f"parent process?)")
        return ""

    def collect(self):
        """{"run", "answers", "problem"} (see :func:`gemmlab_grader.collect.check`) of what the
        runner wrote, once its tree is dead."""
        data = read_fd(self.output, collect.MAX_OUTPUT)
        if len(data) > collect.MAX_OUTPUT:
            return {"run": None, "answers": None,
                    "problem": f"its runner sent more than the {collect.MAX_OUTPUT >> 20} MiB "
                               f"the grader reads"}
        return collect.check(io.BytesIO(data))

    def close(self):
        if self.output is not None:
            os.close(self.output)
            self.output = None
