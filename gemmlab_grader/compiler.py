"""The grading run's warm compiler: one confined compile service, started once, that compiles
each kernel in a fresh fork of itself.

A kernel lab compiles every kernel for real GPUs before it runs (:mod:`gemmlab.labs.compile`).
A one-shot compiler child costs about 2 s a kernel, most of it starting Python, importing
Numba's CUDA target and setting up NVVM; :class:`CompileService` pays that once per run:

    compiler = CompileService(isolation)        # an Isolation, or a function giving one
    judge_code(..., compiler=compiler)          # (gemmlab_grader.isolate) its kernels compile there
    compiler.close()

The service is ``python -m gemmlab.labs.nvcompile --serve`` (:func:`gemmlab.labs.nvcompile.serve`)
started, on the first request, with :func:`~gemmlab_grader.isolate.start_confined`: the run's
sandbox, limits and package copy, as a student's process. Each request runs in a fork of the
warm service with a wall-clock deadline and a CPU limit, so a kernel that loops, crashes or
patches the compiler changes only its own reply. The client is shared by the run's threads: a
writer lock on the service's stdin, a reader thread handing each reply to the caller waiting for
its id, a timeout per request. A service that dies is started again on the next request, and a
request it was working on is sent once more to the new one; a service that does not answer in
time is killed (whole tree). It never falls back to another way of compiling: when the service
cannot answer, the reply says the compiler failed (``stage: "setup"``, as a one-shot child's).
"""
import itertools
import os
import subprocess
import tempfile
import threading

from gemmlab.judging.worker import frame, read_frame
from gemmlab.labs.compile import TIMEOUT, failure

from .folders import remove_tree
from .isolate import start_confined

MODULE = "gemmlab.labs.nvcompile"
START_TIMEOUT = 300.0           # its warm-up, on a machine busy with the run's notebooks
MAX_START_FAILURES = 3          # then every request is answered with the reason, not retried


class ServiceError(Exception):
    """The compile service could not be started, or is closed; the message says why."""


def failed(message):
    """A compiler reply saying the compile service failed."""
    return failure(f"the compile service {message}")


class _Service:
    """One started service process: its confined tree, the requests waiting for a reply and the
    thread reading replies. ``dead`` once its output ended."""

    def __init__(self, isolation, deadline, start_timeout):
        self.workdir = tempfile.mkdtemp(prefix="gemmlab-compile-")
        self.log = open(os.path.join(self.workdir, "compiler.log"), "w+b")
        self.pending, self.dead, self.problem = {}, False, None
        self.pending_lock, self.write_lock = threading.Lock(), threading.Lock()
        self.ready = threading.Event()
        self.tree = start_confined(isolation, self.workdir, MODULE, "--serve", deadline,
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=self.log)
        self.reader = threading.Thread(target=self._read, name="compile-service", daemon=True)
        self.reader.start()
        if not self.ready.wait(start_timeout):
            self.problem = f"did not start within {start_timeout:g} s"
        if self.problem:
            self.stop()
            raise ServiceError(self.problem)

    def _read(self):
        stream = self.tree.popen.stdout
        try:
            hello = read_frame(stream)
            if not (isinstance(hello, dict) and hello.get("ready") is True):
                message = hello.get("message") if isinstance(hello, dict) else None
                self.problem = (f"could not set up the compiler ({str(message)[:400]})"
                                if message else f"ended while starting{self.log_tail()}")
                return
            self.ready.set()
            while (message := read_frame(stream)) is not None:
                with self.pending_lock:
                    waiter = self.pending.pop(message.get("id"), None)
                if waiter is not None:
                    waiter[1] = message.get("reply")
                    waiter[0].set()
        except (OSError, ValueError, AttributeError) as exc:   # a broken or closed stream
            self.problem = self.problem or f"broke off ({exc})"
        finally:
            with self.pending_lock:
                self.dead = True
                waiters, self.pending = list(self.pending.values()), {}
            self.ready.set()
            for event, _ in waiters:
                event.set()

    def log_tail(self):
        try:
            self.log.seek(0)
            tail = self.log.read()[-400:].decode("utf-8", "replace").strip()
        except (OSError, ValueError):
            return ""
        return f"; it said: {tail}" if tail else ""

    def ask(self, number, request, timeout):
        """The reply to ``request``, or None if the service ended first; TimeoutError if none
        came within ``timeout`` seconds."""
        waiter = [threading.Event(), None]
        with self.pending_lock:
            if self.dead:
                return None
            self.pending[number] = waiter
        try:
            with self.write_lock:
                self.tree.popen.stdin.write(frame({"id": number, "request": request}))
                self.tree.popen.stdin.flush()
        except (OSError, ValueError):   # its input is closed: it is ending, or gone
            with self.pending_lock:
                self.pending.pop(number, None)
                self.dead = True
            return None
        if not waiter[0].wait(timeout):
            with self.pending_lock:
                self.pending.pop(number, None)
            raise TimeoutError
        return waiter[1]

    def stop(self):
        """Kill the whole tree, close the pipes, remove the work folder."""
        self.tree.kill()
        for pipe in (self.tree.popen.stdin, self.tree.popen.stdout):
            try:
                pipe.close()
            except OSError:
                pass
        self.reader.join(timeout=10)
        self.log.close()
        try:
            remove_tree(self.workdir)
        except OSError:
            pass


class CompileService:
    """The client of a grading run's compile service (see the module's docstring): hand it to
    :func:`gemmlab.labs.compile.service`. ``isolation``: how to confine it (an
    :class:`~gemmlab_grader.isolate.Isolation`, or a function returning one, called at each
    start); ``deadline``: wall-clock (and CPU) seconds per compile in the service; ``timeout``:
    seconds a request waits for its reply before the service is deemed stuck and killed."""

    def __init__(self, isolation, deadline=TIMEOUT, timeout=None, start_timeout=START_TIMEOUT):
        self.isolation = isolation if callable(isolation) else (lambda: isolation)
        self.deadline, self.start_timeout = float(deadline), float(start_timeout)
        self.timeout = float(timeout) if timeout is not None else self.deadline + 60.0
        self.starts, self.start_failures, self.last_problem = 0, 0, ""
        self._service, self._closed = None, False
        self._lock = threading.Lock()           # starting, stopping and closing
        self._ids = itertools.count(1)

    def compile(self, request):
        """The compiler's reply to ``request`` (see :func:`gemmlab.labs.nvcompile.compile_request`);
        never raises. A request the service died on is sent once more to a fresh service."""
        for _attempt in range(2):
            try:
                service = self._current()
            except ServiceError as exc:
                return failed(str(exc))
            try:
                reply = service.ask(next(self._ids), request, self.timeout)
            except TimeoutError:
                self._stop(service)
                return failed(f"did not answer within {self.timeout:g} s (stopped; it starts "
                              f"again for the next kernel)")
            if reply is not None:
                if isinstance(reply, dict) and isinstance(reply.get("ok"), bool):
                    return reply
                return failed("sent a malformed reply")
        return failed(f"ended twice while compiling this kernel{service.log_tail()}")

    def _current(self):
        """The running service, started if there is none (or it died)."""
        with self._lock:
            if self._closed:
                raise ServiceError("is closed: the grading run is over")
            if self._service is not None and not self._service.dead:
                return self._service
            if self._service is not None:
                self._service.stop()
                self._service = None
            if self.start_failures >= MAX_START_FAILURES:
                raise ServiceError(f"could not be started ({self.start_failures} tries; the "
                                   f"last: {self.last_problem})")
            try:
                self._service = _Service(self.isolation(), self.deadline, self.start_timeout)
            except (ServiceError, OSError, ValueError, RuntimeError) as exc:
                self.start_failures += 1
                self.last_problem = str(exc)
                raise ServiceError(f"could not be started ({exc})") from None
            self.starts += 1
            return self._service

    def _stop(self, service):
        with self._lock:
            if self._service is service:
                self._service = None
            service.stop()

    def pids(self):
        """The live processes of the running service (none if it is not running)."""
        with self._lock:
            return self._service.tree.members() if self._service is not None else set()

    def close(self):
        """Stop the service (its whole tree); later requests are answered with a failure."""
        with self._lock:
            self._closed = True
            service, self._service = self._service, None
        if service is not None:
            service.stop()
