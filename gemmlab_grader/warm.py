"""One notebook's warm worker: its code answers judged in forks of one confined process that
has already imported what a cell's preamble imports, instead of a cold process each.

A cold worker (:class:`~gemmlab_grader.isolate.Worker`) spends about 1.2 CPU-s importing NumPy,
Numba and gemmlab before it runs one line of the cell; a student's 16 notebooks have 32 code
answers. :class:`WarmWorker` starts ``python -m gemmlab.judging.worker --warm`` (see
:func:`gemmlab.judging.worker.warm`) once per notebook, confined as a worker is (the run's
sandbox, limits and package copy), and asks it for a fresh fork per code answer::

    warm = WarmWorker(isolation)
    judge_code(..., isolation=isolation, warm=warm)     # a fork of it runs the cell
    warm.close()

Each fork gets pipes of its own (handed over a Unix socket), starts from the state before any
student code, gets the question's rules put out of reach and the cell run exactly as a cold
worker does, and is ended, with everything it started, before the next one is forked: nothing
one answer does reaches the next. The warm process serves one notebook, that is one student:
whatever a fork does to it (kill it, stall it) touches only that student's later answers, and
a warm process that died or stopped answering is started again. When none can be started the
answer gets a cold worker: the same verdict, only slower.
"""
import json
import os
import select
import socket
import subprocess
import tempfile
import time

from gemmlab.judging.cell import WORKER, Channel

from .folders import remove_tree
from .isolate import said, start_confined

START_TIMEOUT = 120.0          # its imports, on a machine busy with the run's notebooks
END_TIMEOUT = 10.0             # a fork's end, and the processes it left killed
MAX_START_FAILURES = 2         # then this notebook's answers get cold workers


class WarmError(Exception):
    """The warm process could not be started or stopped answering; the message says how."""


class WarmWorker:
    """The warm worker of one notebook (see the module's docstring). ``isolation``: how it is
    confined; ``on_close``: called once it is closed (the caller's clean-up)."""

    def __init__(self, isolation, on_close=None, start_timeout=START_TIMEOUT):
        self.isolation, self.on_close, self.start_timeout = isolation, on_close, start_timeout
        self.starts = self.start_failures = 0
        self._process = None

    def channel(self, timeout):
        """A :class:`~gemmlab.judging.cell.Channel` to a fresh fork, with ``timeout`` seconds for
        everything (a start of the warm process counted in); None when no warm process could be
        had (the caller starts a cold worker)."""
        deadline = time.monotonic() + timeout
        if self._process is not None and not self._process.alive():
            self._stop()
        if self._process is None:
            if self.start_failures >= MAX_START_FAILURES:
                return None
            try:
                self._process = _WarmProcess(self.isolation, min(timeout, self.start_timeout))
                self.starts += 1
            except (WarmError, OSError, ValueError, RuntimeError):  # a cold worker says why
                self.start_failures += 1
                return None
        try:
            return self._process.fork(timeout, deadline)
        except WarmError:
            self._stop()
            return None

    def pids(self):
        """The live processes of the warm process's tree (none when it is not running)."""
        return self._process.tree.members() if self._process is not None else set()

    def _stop(self):
        process, self._process = self._process, None
        if process is not None:
            process.stop()

    def close(self):
        """Stop the warm process, its whole tree; then the caller's ``on_close``."""
        self._stop()
        if self.on_close is not None:
            on_close, self.on_close = self.on_close, None
            on_close()


class _WarmProcess:
    """One started ``worker --warm``: its confined tree and the socket to it."""

    def __init__(self, isolation, start_timeout):
        self.workdir = tempfile.mkdtemp(prefix="gemmlab-warm-")
        self.log = open(os.path.join(self.workdir, "warm.log"), "w+b")
        self.control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.broken = False
        try:
            self.tree = start_confined(isolation, self.workdir, WORKER, "--warm", stdin=theirs,
                                       stdout=subprocess.DEVNULL, stderr=self.log)
        except BaseException:
            self._release()
            raise
        finally:
            theirs.close()
        hello = self.receive(start_timeout)
        if hello != {"ready": True}:
            self.stop()
            raise WarmError(f"it did not start ({hello or 'no answer'}){self.log_tail()}")

    def alive(self):
        return not self.broken and self.tree.popen.poll() is None

    def receive(self, timeout):
        """The next message from the warm process, or None (nothing within ``timeout`` seconds,
        or it is gone; then it is broken)."""
        try:
            if select.select([self.control], [], [], max(timeout, 0.0))[0]:
                data = self.control.recv(1 << 16)
                message = json.loads(data) if data else None
                if isinstance(message, dict):
                    return message
        except (OSError, ValueError):
            pass
        self.broken = True
        return None

    def fork(self, timeout, deadline):
        """A Channel to a fresh fork (see the module's docstring) that gives up at ``deadline``
        (time.monotonic), saying ``timeout`` seconds."""
        request_read, request_write = os.pipe()
        reply_read, reply_write = os.pipe()
        log = tempfile.TemporaryFile(dir=self.workdir)
        try:
            socket.send_fds(self.control, [b'{"op": "fork"}'], [request_read, reply_write,
                                                                 log.fileno()])
        except OSError as exc:
            for fd in (request_write, reply_read):
                os.close(fd)
            log.close()
            self.broken = True
            raise WarmError(f"it could not be asked for a worker ({exc})") from None
        finally:
            os.close(request_read)
            os.close(reply_write)
        fork = _Fork(self, os.fdopen(request_write, "wb"), os.fdopen(reply_read, "rb"), log)
        channel = Channel(fork, timeout, fork.end, fork.log_tail)
        channel.deadline = deadline
        return channel

    def log_tail(self):
        return said(self.log)

    def stop(self):
        """Kill the whole tree, close the socket, remove the work folder."""
        self.broken = True
        self.tree.kill()
        self._release()

    def _release(self):
        self.control.close()
        self.log.close()
        try:
            remove_tree(self.workdir)
        except OSError:
            pass


class _Fork:
    """One fork of the warm process, as much of a Popen as a Channel uses: ``stdin``, ``stdout``,
    ``wait``, ``returncode``."""

    def __init__(self, process, stdin, stdout, log):
        self.process, self.stdin, self.stdout, self.log = process, stdin, stdout, log
        self.returncode = None

    def wait(self, timeout=None):
        """Its return code, told by the warm process once it ended and what it left is killed;
        subprocess.TimeoutExpired if that did not come within ``timeout`` seconds."""
        if self.returncode is None:
            message = self.process.receive(END_TIMEOUT if timeout is None else timeout)
            ended = (message or {}).get("ended")
            if type(ended) is not int:
                raise subprocess.TimeoutExpired(WORKER, timeout)
            self.returncode = ended
        return self.returncode

    def end(self):
        """The answer is judged (or its worker failed): stop the fork and wait until it and what
        it started are gone; a warm process that does not say so is stopped whole."""
        for pipe in (self.stdin, self.stdout):
            try:
                pipe.close()
            except OSError:
                pass
        if self.returncode is None:
            try:
                self.process.control.send(b'{"op": "stop"}')
                self.wait(END_TIMEOUT)
            except (OSError, subprocess.TimeoutExpired):
                self.process.stop()
        self.log.close()

    def log_tail(self):
        return said(self.log)

