"""The answer runtime, the judge's end: a Python answer runs in a process of its own
(:mod:`.runtime_child`, sent as text to ``python -I -S``) with the standard library, NumPy where
its question grants it, and its hand-outs rebuilt from source text (:func:`setup_of`). Nothing of
gemmlab is importable or readable there: an escape (``match check: case object(__globals__=g)``,
frames, any spelling yet to be found) reaches only what the answer was handed. A stateful
hand-out (a lab's ``wmma``) stays here: the runtime holds handles, and each of its calls asks
this side (:class:`Served`, :func:`served`). Cases, references and comparisons stay here
(:func:`.cell.judge_loaded`). ``check()`` starts it as a plain child, the grader in its sandbox
with no package file (``confine``); the source check is a lint. A kind with ``ranks`` (the rank
labs) gets a runtime that forks one process per rank for each run (:class:`Ranked`), each
talking to the judge through its own pipe pair (:class:`Pipes`).
"""
import dis
import inspect
import os
import select
import shutil
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import numpy as np

from .. import platforms
from . import allow
from .cell import Channel, judge_loaded, plain_child
from .kinds import Function
from .verdict import FAIL
from .worker import frame, read_frame

CHILD = Path(__file__).with_name("runtime_child.py").read_text(encoding="utf-8")
NUMPY_HOME = os.path.dirname(os.path.dirname(np.__file__))
ENV = {**dict.fromkeys(("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"), "1"), "PATH": os.defpath,
       **{k: os.environ[k] for k in ("SYSTEMROOT",) if k in os.environ}}   # Windows needs it
DEFAULTS = {"np": 'Facade("np", {}, "this exercise is plain Python")',
            "gl": 'Facade("gl", {}, "the package\'s own implementation is not part of an answer")'}


def setup_of(allows):
    """(the setup text that builds ``allows``'s hand-outs and granted imports in the runtime,
    whether it needs NumPy); ValueError if one of them cannot travel as text (a module, a
    stateful object)."""
    sources, uses_numpy = {}, [False]

    def expression(value, key):
        if isinstance(value, allow.Facade):
            members = object.__getattribute__(value, "_members")
            inner = ", ".join(f"{k!r}: {expression(v, k)}" for k, v in members.items())
            return (f"Facade({object.__getattribute__(value, '_name')!r}, {{{inner}}}, "
                    f"{object.__getattribute__(value, '_reason')!r})")
        if value is getattr(np, str(key), None):
            uses_numpy[0] = True
            return f"np.{key}"
        if isinstance(value, allow.InRuntime):
            return str(value)
        if value is allow.math:
            return "math"
        if inspect.isfunction(value) and value.__module__.startswith("gemmlab."):
            _course_source(value, sources)
            uses_numpy[0] = True
            return value.__name__
        raise ValueError(f"{key}: {type(value).__name__}")
    given = {**DEFAULTS, **{name: expression(maker(), name)
                            for name, (maker, _why) in allows.gives.items()}}
    modules = {path: expression(maker(), path) for path, maker in allows.imports.items()}
    lines = ["import math"] + (["import numpy as np"] if uses_numpy[0] else [])
    lines += list(sources.values())
    for name, values in (("HANDOUTS", given), ("MODULES", modules)):
        lines.append(f"{name} = {{" + ", ".join(f"{k!r}: {v}" for k, v in values.items()) + "}")
    return "\n".join(lines) + "\n", uses_numpy[0]


def _course_source(fn, sources):
    """Put the source of the course function ``fn`` and of the module's functions it calls into
    ``sources`` (name -> text), callees first; ValueError if it reads any other module global
    than math and np."""
    module = sys.modules[fn.__module__]
    for name in _globals_read(fn.__code__):
        dep = vars(module).get(name)
        if dep is None or dep is allow.math or dep is np or name in sources:
            continue
        if not (inspect.isfunction(dep) and dep.__module__ == fn.__module__):
            raise ValueError(f"{fn.__name__} reads {name}")
        _course_source(dep, sources)
    sources[fn.__name__] = textwrap.dedent(inspect.getsource(fn))


def _globals_read(code):
    """The global names ``code`` (and the code nested in it) loads."""
    names = {i.argval for i in dis.get_instructions(code) if i.opname == "LOAD_GLOBAL"}
    for const in code.co_consts:
        if inspect.iscode(const):
            names |= _globals_read(const)
    return names


def serves(question):
    """Whether ``question``'s answer is judged in the runtime: a Function question (the answer
    is called on data) or a kind made for it (``in_runtime``: a lab whose hand-outs call back),
    whose hand-outs can travel as text."""
    made_for = type(question.kind) is Function or getattr(question.kind, "in_runtime", False)
    if not made_for or question.allows is None:
        return False
    try:
        setup_of(question.allows)
    except ValueError:          # a hand-out that cannot travel as text
        return False
    return True


def judge(question, source, name, rng=None, timeout=30.0, confine=plain_child):
    """(status, feedback) on the function ``name`` of the cell ``source``, run in a fresh
    runtime started by ``confine(argv, folder, env) -> (popen, end)``: public cases when ``rng``
    is None, else hidden cases drawn from it."""
    problem = allow.refused(question.allows, source, name)
    if problem:
        return FAIL, problem
    setup, uses_numpy = setup_of(question.allows)
    ranks = getattr(question.kind, "ranks", 0)
    if ranks and not platforms.POSIX:
        raise RuntimeError(platforms.needs_posix(f"check() of {question.id}", "each rank is a "
                                                 "forked process", around=""))
    folder = tempfile.mkdtemp(prefix="gemmlab-answer-")
    pipes = [Pipes() for _ in range(ranks)]
    theirs = [fd for p in pipes for fd in p.theirs]
    try:
        popen, end = confine([sys.executable, "-I", "-S", "-c", CHILD], folder, dict(ENV),
                             **({"pass_fds": theirs} if pipes else {}))
    finally:
        for fd in theirs:
            os.close(fd)
    channel = Ranked(popen, timeout, end, pipes) if pipes else Served(popen, timeout, end)
    message = {"op": "load", "source": str(source), "name": str(name), "setup": setup,
               "numpy": NUMPY_HOME if uses_numpy else None, "standins": question.allows.standins}
    if pipes:
        message["ranks"] = [p.theirs for p in pipes]
    try:
        return judge_loaded(question, channel, message, name, rng, picture=False)
    finally:
        channel.close()
        shutil.rmtree(folder, ignore_errors=True)


class Served(Channel):
    """The channel to a runtime whose hand-outs ask this side between a call and its reply
    (:func:`gemmlab.judging.runtime_child.remote`): each ask goes to ``serve(ask)``
    (:func:`served`), unanswered, and the reply of the call comes after them."""
    serve = None

    def request(self, message):
        reply = super().request(message)
        while "ask" in reply:
            if self.serve:
                self.serve(reply["ask"])
            reply = super().request(None)
        return reply


def served(fn, serve, *args):
    """``fn(*args)``, ``fn`` an answer loaded in the runtime (:func:`judge`'s), with each call
    of its hand-outs that stay here done by ``serve(ask)`` (a lab's judging side: it holds the
    objects, does the work, counts it, and keeps what it refused); ``serve`` must not raise."""
    channel = fn.channel
    channel.serve = serve
    try:
        return fn(*args)
    finally:
        channel.serve = None


class Pipes:
    """The judge's ends of one rank's pipes (requests to it, its frames back), non-blocking;
    ``theirs``: the other ends, passed to the runtime at spawn. Each wait polls ``alive()``
    (which raises to give up) every 50 ms."""

    def __init__(self):
        theirs_in, self.out = os.pipe()
        self.inp, theirs_out = os.pipe()
        self.theirs, self.alive = (theirs_in, theirs_out), None
        for fd in (self.inp, self.out):
            os.set_blocking(fd, False)
        self.reader = platforms.PipeReader(self.inp)

    def next(self, alive):
        """The next frame from the rank (None if the runtime is gone; ValueError if malformed)."""
        self.alive = alive
        return read_frame(self)

    def read(self, n):
        """Up to ``n`` bytes from the rank, as :func:`.worker.read_frame` reads a stream."""
        while (data := self.reader.read(n, 0.05)) is None:
            self.alive()
        return data

    def write(self, obj, alive):
        data = memoryview(frame(obj))
        while data:
            # POSIX only: the rank labs' pipes (judge() refuses rank labs elsewhere)
            if select.select([], [self.out], [], 0.05)[1]:
                data = data[os.write(self.out, data):]
            else:
                alive()

    def drain(self):
        """Forget what the rank's process wrote and nobody read (it is gone)."""
        try:
            while os.read(self.inp, 1 << 20):
                pass
        except BlockingIOError:
            pass

    def close(self):
        for fd in (self.inp, self.out):
            os.close(fd)


class Ranked(Served):
    """The channel to a rank labs' runtime (:func:`gemmlab.judging.runtime_child.ranks`): its
    load request sets it up and one rank process loads the cell for the load reply; then
    :meth:`fork` starts a run's rank processes, which talk through ``pipes``, and :meth:`end`
    ends them."""

    def __init__(self, popen, timeout, end, pipes):
        super().__init__(popen, timeout, end)
        self.pipes = pipes

    def request(self, message):
        if not (isinstance(message, dict) and message.get("op") == "load"):
            return super().request(message)
        super().request(message)
        self.fork(1)
        try:
            return self.pipes[0].next(self._in_time) or {"ok": False, "error": {
                "type": "CodeError", "message": "the process running your cell ended"}}
        finally:
            self.end()

    def _in_time(self):
        if time.monotonic() > self.deadline:
            raise self.timed_out()

    def fork(self, p):
        if not 1 <= p <= len(self.pipes):
            raise ValueError(f"{p} ranks: this runtime has pipes for 1 to {len(self.pipes)}")
        super().request({"op": "fork", "p": p})

    def end(self):
        super().request({"op": "end"})
        for pipes in self.pipes:
            pipes.drain()

    def close(self):
        super().close()
        for pipes in self.pipes:
            pipes.close()
        self.pipes = []
