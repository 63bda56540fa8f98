"""Judging a cell's code from outside the process that runs it, the asking end of
:mod:`gemmlab.judging.worker`: :func:`judge_cell` loads the cell in the worker behind a
:class:`Channel` and judges the function ``name`` with the question's kind *here*, on a
:class:`CellFunction`: a stand-in that forwards each call (or run helper,
:func:`gemmlab.judging.where.where_it_lives`) to the worker and brings back plain data. Cases,
references and comparisons never enter the worker; what the code writes into its arguments stays
there. The grader's channel is confined (its isolate module); :func:`plain_channel` is a plain
child, for ``check()`` on a GPU backend.
"""
import builtins
import os
import signal
import subprocess
import sys
import time

from .. import platforms
from . import values
from .verdict import FAIL, NOT_ATTEMPTED, AnswerTypeError
from .where import helper_spec
from .worker import frame, read_frame

WORKER = "gemmlab.judging.worker"


class CodeError(Exception):
    """The student's code failed in its process (or the process did); the message says how."""


class Channel:
    """Frames to and from a worker process (``popen`` with pipes), with one deadline for
    everything; ``on_close`` ends the process and all it started. ``compiler``: who compiles the
    worker's kernels (``compile(request) -> reply``), None for :mod:`gemmlab.labs.compile`'s."""

    def __init__(self, popen, timeout, on_close, log_tail=lambda: ""):
        self.popen, self.timeout, self.on_close, self.log_tail = popen, timeout, on_close, log_tail
        self.deadline = time.monotonic() + timeout
        self.reader = platforms.PipeReader(popen.stdout)
        self.failure = None         # set once the process is gone: later calls raise it again
        self.compiler = None

    def request(self, message):
        """Send ``message`` (None: nothing), wait for the next frame."""
        if self.failure:
            raise self.failure
        try:
            if message is not None:
                self.popen.stdin.write(frame(message))
            self.popen.stdin.flush()
            reply = read_frame(self)
            if reply is None:
                self.popen.wait(timeout=5)
                raise OSError(f"it ended: {describe_exit(self.popen.returncode)}"
                              f"{self.log_tail()}")
            if not isinstance(reply, dict) or not isinstance(reply.get("ok"), bool):
                raise ValueError("a malformed reply")
        except TimeoutError as exc:
            self.failure = exc
        except (OSError, ValueError, subprocess.TimeoutExpired) as exc:
            self.failure = CodeError(f"the process running your code broke off ({exc})")
        if self.failure:
            self.close()
            raise self.failure
        return reply

    def read(self, n):
        """Up to ``n`` bytes of the worker's reply; TimeoutError at the deadline."""
        data = self.reader.read(n, self.deadline - time.monotonic())
        if data is None:
            raise self.timed_out()
        return data

    def timed_out(self):
        return TimeoutError(f"no answer within {self.timeout:g} s (an endless loop, or a very "
                            f"slow one?)")

    def close(self):
        self.on_close()
        for pipe in (self.popen.stdin, self.popen.stdout):
            try:
                pipe.close()
            except OSError:
                pass


def describe_exit(returncode):
    """Why a process ended, from its return code, in words."""
    if returncode is None:
        return "still running"
    if 128 < returncode < 128 + 65:     # a shell's or bubblewrap's way to report a signal
        return f"exit status {returncode} ({describe_exit(128 - returncode)})"
    if returncode >= 0:
        return f"exit status {returncode}"
    sig = -returncode
    reason = {getattr(signal, n, None): w for n, w in (   # by name: Windows lacks some
        ("SIGKILL", " (killed: out of memory, or by another process)"), ("SIGSEGV", " (a crash)"),
        ("SIGXCPU", " (its CPU time limit)"), ("SIGXFSZ", " (its file size limit)"))}.get(sig, "")
    return f"signal {signal.Signals(sig).name}{reason}" if sig in signal.valid_signals() \
        else f"signal {sig}"


def plain_channel(timeout=120.0):
    """A worker as a plain child on the simulator backend, in a session of its own that closing
    ends."""
    if not platforms.POSIX:
        raise RuntimeError(platforms.needs_posix("check() of a code answer on a GPU backend",
                                                 "it ends a child and all it started"))
    env = dict(os.environ, GEMMLAB_BACKEND="sim",
               PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    popen, end = plain_child([sys.executable, "-m", WORKER], None, env)
    return Channel(popen, timeout, end)


def plain_child(argv, cwd, env, pass_fds=()):
    """``argv`` as a plain child with pipes (and the fds ``pass_fds``), in a session of its own;
    (popen, a function that ends it and all it started)."""
    popen = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, pass_fds=pass_fds,
                             # POSIX only: Windows ignores it, and end() falls back to kill()
                             start_new_session=True)

    def end():
        try:
            # POSIX only: Windows has no killpg (AttributeError, below)
            os.killpg(popen.pid, signal.SIGKILL)
        except (OSError, AttributeError):       # gone already, or Windows: no process groups
            popen.kill()
        popen.wait()
    return popen, end


class CellFunction:
    """The student's function, living in a worker: call it, or hand it to a run helper
    (``call_helper``); its repr is the one it has there. Arguments travel as copies, results as
    plain data. ``cell``: the (source, name) it was loaded with (a kernel lab compiles it).
    ``wants_picture``: whether the judge should bring back a picture of the run (check() draws
    one; a grade does not)."""

    def __init__(self, channel, text, cell=None, wants_picture=True):
        self.channel, self._text, self.cell = channel, text, cell
        self.wants_picture = wants_picture
        self.compiler = getattr(channel, "compiler", None)      # who compiles its kernel

    def __repr__(self):
        return self._text

    def __call__(self, *args, **kwargs):
        return self._request(args, kwargs)

    def call_helper(self, helper, *args, **kwargs):
        """``helper(fn, *args, **kwargs)`` run in the worker, next to the student's function;
        ``helper`` must be a module-level function of gemmlab."""
        return self._request(args, kwargs, helper=helper_spec(helper))

    def _request(self, args, kwargs, helper=None):
        message = {"op": "call", "args": [values.encode(a) for a in args],
                   "kwargs": {str(k): values.encode(v) for k, v in kwargs.items()}}
        if helper:
            message["helper"] = helper
        reply = self.channel.request(message)
        if not reply["ok"]:
            raise exception_from(reply.get("error") or {})
        try:
            return values.decode(reply.get("value"))
        except (values.DecodeError, ValueError, TypeError) as exc:
            raise CodeError(f"its result could not be read back ({exc})") from None


def exception_from(error):
    """The exception to raise here for one the student's code raised there: the builtin class
    of that name (TypeError, IndexError, ...), else a CodeError named so."""
    name = str(error.get("type", "Exception"))[:60]
    message = str(error.get("message", ""))[:500]
    cls = getattr(builtins, name, None)
    if not (isinstance(cls, type) and issubclass(cls, Exception)):
        safe = "".join(c for c in name if c.isalnum() or c == "_") or "CodeError"
        cls = type(safe if safe.isidentifier() else "CodeError", (CodeError,), {})
    try:
        return cls(message)
    except Exception:  # a builtin exception class with another signature
        return CodeError(f"{name}: {message}")


def judge_cell(question, source, name, rng, channel, picture=False):
    """(status, feedback) of ``question``'s kind on the function ``name`` of the cell ``source``,
    loaded in the worker behind ``channel``: public cases when ``rng`` is None, else hidden
    cases drawn from it, here. A broken rule, a cell that raises, a worker that dies or hangs: a
    FAIL with the reason. The caller closes the channel. With ``picture``, a third item: a
    kernel lab's picture of the run, or None."""
    source, problem = prepared(question, source, name)
    verdict = (FAIL, problem) if problem else tuple(judge_loaded(
        question, channel, {"op": "load", "source": str(source), "name": str(name)}, name, rng,
        picture))
    return (verdict + (None,))[:3] if picture else verdict[:2]


def judge_loaded(question, channel, load, name, rng, picture):
    """(status, feedback[, picture]): the cell loaded by ``load`` behind ``channel`` (the worker,
    :mod:`.runtime`'s answer runtime), its function ``name`` judged here by the question's kind."""
    try:
        loaded = channel.request(load)
    except TimeoutError as exc:
        return FAIL, f"your cell did not finish: {exc}."
    except CodeError as exc:
        return FAIL, f"your cell could not be run: {exc}"
    if not loaded["ok"]:
        error = loaded.get("error") or {}
        return FAIL, (f"your cell raised {str(error.get('type'))[:60]}: "
                      f"{str(error.get('message'))[:300]}")
    state = loaded.get("state")
    if state in ("missing", "none", "ellipsis"):
        missing = "no " + name if state == "missing" else f"{name} is {state}"
        return NOT_ATTEMPTED, f"{missing} yet. {question.prompt}"
    text = str(loaded.get("repr", ""))[:200]
    try:
        if loaded.get("callable"):
            answer = CellFunction(channel, text, (load["source"], name), wants_picture=picture)
        else:       # a value that is not a function: its kind refuses the stand-in, naming it
            answer = question.kind.coerce(values.decode({"t": "opaque", "type": loaded.get("type"),
                                                         "repr": text}))
        return question.kind.judge(question, answer, rng)
    except AnswerTypeError as exc:
        return FAIL, f"{exc}."


def judge_alone(question, source, name, rng=None, timeout=120.0, picture=False):
    """:func:`judge_cell` on a fresh :func:`plain_channel` (closed after): the cell judged as the
    grader judges it, alone in a process of its own, on the simulator backend."""
    channel = plain_channel(timeout)
    try:
        return judge_cell(question, source, name, rng, channel, picture)
    finally:
        channel.close()


def prepared(question, source, name):
    """(what of the cell ``source`` to load for ``question``, '') or (None, why nothing): the
    cell refused if it breaks what the question allows (:func:`gemmlab.judging.allow.refused`);
    else the part its kind runs (a kernel lab: the cell's kernels, constants and imports), the
    cell under the question's declaration (the rank labs'), or the cell as it is (a question
    that declares nothing: a withheld bank's stand-in)."""
    from .allow import refused
    from .kinds import declared_cell
    allows = getattr(question, "rules", None)
    problem = None if allows is None else refused(allows, source)
    if problem:
        return None, problem
    prepare = getattr(question.kind, "worker_source", None)
    if prepare is not None:
        return prepare(source, name)
    if getattr(question, "allows", None) is None:
        return source, ""
    return declared_cell(question.id, source, name), ""
