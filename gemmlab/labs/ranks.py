"""Simulated ranks for students' per-rank programs: one thread per rank, every message recorded.

A per-rank program is a function ``program(comm, *args)``; :func:`run_ranks` starts one thread per
rank, each calling it with its own :class:`RankComm` and its own copy of its arguments, and
returns a :class:`RankRun`: what every rank returned, the trace of point-to-point messages (the
``Transfer`` records of :mod:`gemmlab.collectives`, so the ring stepper can replay a student's
run), and the log of collectives (the ``CommLog`` of :mod:`gemmlab.parallel`).

A lab judges a notebook cell's program with :func:`run_answer`: in the answer runtime each rank
is a process of its own, forked from a parent that never ran the cell (no global, class,
builtin or default is shared), and each thread here is that rank's :class:`Relay`, which does
every comm call its process asks for on its RankComm: the judge routes and records every
message, and the trace holds exactly what crossed between the ranks.

The rules are those of a real MPI job with large messages:

* ``comm.send(dst, a)`` is a rendezvous: it returns once rank ``dst`` has received the data
  (MPI_Ssend, and what MPI_Send does for large buffers). ``comm.recv(src)`` waits for it.
  ``comm.sendrecv(a, dst, src)`` sends and receives at once (MPI_Sendrecv), so a ring of them
  cannot deadlock. Data is copied when sent: a rank never sees another rank's later writes.
* ``comm.all_reduce(a)`` and ``comm.all_gather(a, axis=-1)`` must be called by every rank, in
  the same order; they run the course's simulated ring and are recorded in ``RankRun.comm``.
* When every rank that has not returned waits in a communication call that nothing can complete,
  the run stops at once and :attr:`RankRun.error` names the wait-for cycle; a rank that raises
  stops the run and the error names it; a rank still busy after ``time_limit`` seconds is
  stopped and named too. Nothing hangs.

Steps: each message gets the communication round it travels in, counted the way a ring is drawn.
A rank's clock starts at 0; a message travels in round ``max(sender's clock when it sent,
receiver's clock when it began to receive)``; after a call a rank's clock is one past the last
round it took part in. A ring of ``sendrecv`` calls thus takes one round per call, while "send
then recv" on every rank takes two.
"""
import threading
import time
from collections import deque
from dataclasses import dataclass, field, replace
from typing import Callable, Optional

import numpy as np

from ..collectives import ring_allgather, ring_allreduce
from ..collectives.result import Transfer, make_result
from ..judging import values
from ..judging.cell import CellFunction, describe_exit, exception_from
from ..judging.runtime import Ranked
from ..parallel.comm import CommLog, CommRecord, comm_record
from .deadlock import describe_deadlock
from .limits import DEFAULT_TIME_LIMIT, Stop, raise_in_thread, short_traceback

class LabRuleError(Exception):
    """A call the lab forbids (e.g. comm.all_reduce in the ring lab) or uses wrongly (mismatched
    collectives); the message says what to do instead."""


@dataclass
class _Message:
    src: int
    dst: int
    data: np.ndarray
    posted_at: int               # the sender's clock when it sent
    step: Optional[int] = None   # set when received
    taken: bool = False


@dataclass
class CollectiveCall:
    """One collective the ranks called: its name, what each rank gave, and its CommRecord."""
    collective: str              # "all-reduce" or "all-gather"
    shapes: tuple                # per rank, the shape it contributed
    dtype: str
    axis: Optional[int]
    record: CommRecord
    inputs: tuple = ()           # per rank, the array it contributed (a lab checks the content)


@dataclass
class RankRun:
    """The outcome of one run: per-rank return values, the message trace, the collectives.

    ``error`` is None when every rank returned; otherwise it says why the run stopped
    (``failure`` is "deadlock", "error", "rule" or "timeout" and ``failed_rank`` the rank named).
    """
    n_ranks: int
    outputs: list
    trace: list = field(default_factory=list)
    collectives: list = field(default_factory=list)
    payloads: list = field(default_factory=list)     # the data of each message of the trace
    error: Optional[str] = None
    failure: Optional[str] = None
    failed_rank: Optional[int] = None

    @property
    def comm(self):
        """The collectives as a CommLog (prints as a table)."""
        return CommLog(c.record for c in self.collectives)

    @property
    def n_steps(self):
        """Communication rounds of the point-to-point messages (0 when none was sent)."""
        return self.result().n_steps

    def sent_bytes(self):
        """Bytes each rank sent point to point."""
        return self.result().sent_bytes

    def annotated(self, label):
        """This run with each message's chunk and phase set by ``label(src, dst, data) ->
        (chunk, phase)`` (a lab reads them off the data it chose)."""
        trace = [t._replace(**dict(zip(("chunk", "phase"), label(t.src, t.dst, data), strict=True)))
                 for t, data in zip(self.trace, self.payloads, strict=True)]
        return replace(self, trace=trace)

    def result(self, algorithm="your program"):
        """The run as a CollectiveResult (outputs, byte ledger, trace), as the ring stepper
        replays it."""
        return make_result(algorithm, self.outputs, self.trace, self.n_ranks)

    def __repr__(self):
        state = "ok" if self.error is None else f"stopped: {self.error}"
        return (f"RankRun(ranks={self.n_ranks}, messages={len(self.trace)}, steps={self.n_steps}, "
                f"collectives={[c.collective for c in self.collectives]}, {state})")


def _check_rank(value, n, what):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{what}: expected a rank number from 0 to {n - 1}, got "
                        f"{type(value).__name__} {value!r:.40}")
    if not 0 <= value < n:
        raise ValueError(f"{what}: rank {value} does not exist; there are {n} ranks, 0 to {n - 1}")
    return int(value)


def numeric_array(a, copy=False):
    """``a`` as a NumPy array of numbers (a private copy if ``copy``), or None if it is not one."""
    try:
        arr = np.array(a, copy=True) if copy else np.asarray(a)
    except Exception:
        return None
    return None if arr.dtype == object or arr.dtype.kind not in "biufc" else arr


def _copy_array(a, what):
    """A private copy of ``a`` as a numeric NumPy array, or a TypeError saying what was given."""
    arr = numeric_array(a, copy=True)
    if arr is None:
        raise TypeError(f"{what}: expected a NumPy array of numbers, got "
                        f"{type(a).__name__} {a!r:.60}")
    return arr


class _World:
    """The state every rank thread shares, guarded by one condition variable."""

    def __init__(self, n, allow_collectives, deadline):
        self.cond = threading.Condition()
        self.n = n
        self.allow_collectives = allow_collectives
        self.deadline = deadline
        self.channels = {}                  # (src, dst) -> deque of _Message, in send order
        self.waiting = {}                   # rank -> (predicate, what it waits for)
        self.finished = set()               # ranks that returned or raised
        self.clock = [0] * n
        self.trace = []                     # Transfer records, in the order received
        self.payloads = []                  # what each of them carried
        self.calls = []                     # collective number -> {rank: (name, array, axis)}
        self.results = {}                   # collective number -> per-rank outputs
        self.n_calls = [0] * n
        self.collectives = []
        self.stop = None                    # (failure, rank, message) once the run must end

    # -- waiting, and noticing when nobody can move --

    def wait(self, rank, predicate, what):
        """Block rank until ``predicate()`` holds; raise Stop if the run stops meanwhile."""
        try:
            while not predicate():
                if self.stop is not None:
                    raise Stop()
                self.waiting[rank] = (predicate, what)
                if self._stuck():
                    self.stop = ("deadlock", None, describe_deadlock(self._wait_for()))
                    self.cond.notify_all()
                    raise Stop()
                self.cond.wait(timeout=max(0.01, self.deadline - time.monotonic()))
                if time.monotonic() > self.deadline and not predicate() and self.stop is None:
                    self.stop = ("timeout", None, None)
                    self.cond.notify_all()
        finally:
            self.waiting.pop(rank, None)
        if self.stop is not None:
            raise Stop()

    def _stuck(self):
        live = [r for r in range(self.n) if r not in self.finished]
        return all(r in self.waiting and not self.waiting[r][0]() for r in live)

    def _wait_for(self):
        """rank -> (what it waits in, the rank it waits on) for every waiting rank."""
        edges = {}
        for rank, (_, what) in self.waiting.items():
            kind = what[0]
            if kind == "collective":
                seq = what[2]
                joined = self.calls[seq] if seq < len(self.calls) else {}
                missing = [r for r in range(self.n) if r not in joined]
                edges[rank] = (what, missing[0] if missing else rank)
            else:
                edges[rank] = (what, what[1])
        return {"edges": edges, "finished": set(self.finished)}

    # -- point to point --

    def channel(self, src, dst):
        return self.channels.setdefault((src, dst), deque())

    def post(self, src, dst, data):
        msg = _Message(src, dst, data, self.clock[src])
        self.channel(src, dst).append(msg)
        self.cond.notify_all()
        return msg

    def take(self, src, dst):
        msg = self.channel(src, dst).popleft()
        msg.step = max(msg.posted_at, self.clock[dst])
        msg.taken = True
        self.trace.append(Transfer(msg.step, src, dst, None, "p2p", int(msg.data.nbytes)))
        self.payloads.append(msg.data)
        self.cond.notify_all()
        return msg

    # -- collectives --

    def join_collective(self, rank, name, data, axis):
        seq = self.n_calls[rank]
        self.n_calls[rank] += 1
        while len(self.calls) <= seq:
            self.calls.append({})
        joined = self.calls[seq]
        for other, (other_name, other_data, other_axis) in joined.items():
            _check_same_collective(seq, rank, name, data, axis, other, other_name, other_data,
                                   other_axis)
        joined[rank] = (name, data, axis)
        if len(joined) == self.n:
            self._run_collective(seq, name, axis)
        return seq

    def _run_collective(self, seq, name, axis):
        joined = self.calls[seq]
        arrays = [joined[r][1] for r in range(self.n)]
        if name == "all-reduce":
            res = ring_allreduce(arrays)
            outputs = list(res.outputs)
        else:
            moved = [np.moveaxis(np.atleast_1d(a), axis, 0) for a in arrays]
            res = ring_allgather(moved)
            outputs = [np.moveaxis(out, 0, axis) for out in res.outputs]
        record = comm_record(name, f"collective {seq + 1} of the rank program", arrays, res)
        self.collectives.append(CollectiveCall(name, tuple(a.shape for a in arrays),
                                               str(arrays[0].dtype), axis, record, tuple(arrays)))
        start = max(self.clock)
        for r in range(self.n):
            self.clock[r] = start + res.n_steps
        self.results[seq] = outputs
        self.cond.notify_all()


def _check_same_collective(seq, rank, name, data, axis, other, other_name, other_data, other_axis):
    label = f"collective number {seq + 1}"
    if name != other_name:
        raise LabRuleError(f"{label}: rank {rank} called {name} but rank {other} called "
                           f"{other_name}; every rank must call the same collectives in the same "
                           f"order")
    if name == "all-reduce" and data.shape != other_data.shape:
        raise LabRuleError(f"{label} (all_reduce): rank {rank} gave shape {data.shape} but rank "
                           f"{other} gave {other_data.shape}; an all-reduce adds arrays of one "
                           f"shape")
    if name == "all-gather":
        if axis != other_axis:
            raise LabRuleError(f"{label} (all_gather): rank {rank} gathers along axis {axis} but "
                               f"rank {other} along axis {other_axis}")
        rest = [s for i, s in enumerate(data.shape) if i != axis % max(data.ndim, 1)]
        other_rest = [s for i, s in enumerate(other_data.shape)
                      if i != other_axis % max(other_data.ndim, 1)]
        if data.ndim != other_data.ndim or rest != other_rest:
            raise LabRuleError(f"{label} (all_gather along axis {axis}): rank {rank} gave shape "
                               f"{data.shape} and rank {other} {other_data.shape}; the pieces may "
                               f"differ only along the gathered axis")


class RankComm:
    """What one rank's program is given: ``rank``, ``size`` and the communication calls."""

    def __init__(self, world, rank):
        self._world = world
        self.rank = rank
        self.size = world.n

    def __repr__(self):
        return f"RankComm(rank={self.rank}, size={self.size})"

    def send(self, dst, a):
        """Send array ``a`` to rank ``dst``; returns once ``dst`` has received it (rendezvous)."""
        w = self._world
        dst = _check_rank(dst, w.n, "comm.send(dst, a): dst")
        data = _copy_array(a, "comm.send(dst, a): a")
        with w.cond:
            msg = w.post(self.rank, dst, data)
            w.wait(self.rank, lambda: msg.taken, ("send", dst))
            w.clock[self.rank] = max(w.clock[self.rank], msg.step + 1)

    def recv(self, src):
        """The next array rank ``src`` sends to this rank (waits until it is sent)."""
        w = self._world
        src = _check_rank(src, w.n, "comm.recv(src): src")
        with w.cond:
            box = w.channel(src, self.rank)
            w.wait(self.rank, lambda: len(box) > 0, ("recv", src))
            msg = w.take(src, self.rank)
            w.clock[self.rank] = msg.step + 1
        return msg.data

    def sendrecv(self, a, dst, src):
        """Send ``a`` to ``dst`` and receive from ``src`` at the same time; returns what arrived."""
        w = self._world
        dst = _check_rank(dst, w.n, "comm.sendrecv(a, dst, src): dst")
        src = _check_rank(src, w.n, "comm.sendrecv(a, dst, src): src")
        data = _copy_array(a, "comm.sendrecv(a, dst, src): a")
        with w.cond:
            out = w.post(self.rank, dst, data)
            box = w.channel(src, self.rank)
            w.wait(self.rank, lambda: len(box) > 0, ("sendrecv-recv", src, dst))
            incoming = w.take(src, self.rank)
            w.wait(self.rank, lambda: out.taken, ("sendrecv-send", dst, src))
            w.clock[self.rank] = max(out.step, incoming.step) + 1
        return incoming.data

    def _collective(self, name, a, axis, call):
        w = self._world
        if not w.allow_collectives:
            raise LabRuleError(f"{call} is not available in this lab: build the all-reduce "
                               f"yourself from comm.send, comm.recv and comm.sendrecv")
        data = _copy_array(a, f"{call}: a")
        if name == "all-gather":
            if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)):
                raise TypeError(f"{call}: axis must be a whole number, got {axis!r}")
            if not -max(data.ndim, 1) <= axis < max(data.ndim, 1):
                raise ValueError(f"{call}: axis {axis} does not exist for an array of shape "
                                 f"{data.shape}")
            axis = int(axis)
        with w.cond:
            seq = w.join_collective(self.rank, name, data, axis)
            w.wait(self.rank, lambda: seq in w.results, ("collective", name, seq))
            return w.results[seq][self.rank]

    def all_reduce(self, a):
        """The elementwise sum of every rank's ``a``, returned on every rank."""
        return self._collective("all-reduce", a, None, "comm.all_reduce(a)")

    def all_gather(self, a, axis=-1):
        """Every rank's ``a`` concatenated along ``axis`` in rank order, returned on every rank."""
        return self._collective("all-gather", a, axis, "comm.all_gather(a, axis)")


# -- running a program on n ranks --

def run_ranks(program: Callable, per_rank_args, allow_collectives=True,
              time_limit=DEFAULT_TIME_LIMIT):
    """Run ``program(comm, *args)`` on ``len(per_rank_args)`` simulated ranks, one thread each.

    ``per_rank_args[r]``: rank r's arguments (a tuple; anything else is one argument). Each rank
    gets its own deep copy of its arguments. ``allow_collectives=False`` makes comm.all_reduce and
    comm.all_gather raise (labs where the student builds them). Returns a :class:`RankRun`; never
    raises for what the program does.
    """
    if not callable(program):
        raise TypeError(f"run_ranks: program must be a function program(comm, ...), got "
                        f"{type(program).__name__}")
    args = [a if isinstance(a, tuple) else (a,) for a in per_rank_args]
    n = len(args)
    if n < 1:
        raise ValueError("run_ranks: per_rank_args must give the arguments of at least one rank")
    world = _World(n, allow_collectives, time.monotonic() + time_limit)
    outputs = [None] * n

    def body(rank):
        try:
            mine = tuple(np.array(a, copy=True) if isinstance(a, np.ndarray) else a
                         for a in args[rank])
            outputs[rank] = program(RankComm(world, rank), *mine)
        except Stop:
            pass
        except LabRuleError as exc:
            _fail(world, "rule", rank, str(exc))
        except RankEnded as exc:
            _fail(world, "ended", rank, str(exc))
        except Exception as exc:  # the student's code: report it, naming the rank
            _fail(world, "error", rank, short_traceback(exc, program))
        finally:
            with world.cond:
                world.finished.add(rank)
                if world.stop is None and world.waiting and world._stuck():
                    world.stop = ("deadlock", None, describe_deadlock(world._wait_for()))
                world.cond.notify_all()

    threads = [threading.Thread(target=body, args=(r,), daemon=True, name=f"rank {r}")
               for r in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=max(0.0, world.deadline - time.monotonic()))
    busy = [r for r, t in enumerate(threads) if t.is_alive()]
    if busy:
        with world.cond:
            if world.stop is None:
                world.stop = ("timeout", busy[0], None)
            world.cond.notify_all()
        for r in busy:
            if threads[r].is_alive():
                raise_in_thread(threads[r].ident)
        for r in busy:
            threads[r].join(timeout=2.0)
    return _finish(world, outputs, busy, time_limit)


def _fail(world, failure, rank, message):
    with world.cond:
        if world.stop is None:
            world.stop = (failure, rank, message)
        world.cond.notify_all()


def _finish(world, outputs, busy, time_limit):
    order = sorted(range(len(world.trace)), key=lambda i: world.trace[i][:3])
    run = RankRun(world.n, outputs, [world.trace[i] for i in order], list(world.collectives),
                  [world.payloads[i] for i in order])
    if world.stop is None:
        return run
    failure, rank, message = world.stop
    run.failure, run.failed_rank = failure, rank
    if failure == "deadlock":
        run.error = message
    elif failure == "timeout":
        who = busy if busy else [r for r in range(world.n) if r not in world.finished]
        names = ", ".join(map(str, who)) or "?"
        run.failed_rank = who[0] if who else None
        run.error = (f"rank {names} did not finish within {time_limit:g} s (an endless loop, or "
                     f"far more work than the lab needs)")
    elif failure == "rule":
        run.error = f"rank {rank}: {message}"
    elif failure == "ended":
        run.error = f"rank {rank}'s process ended: {message}"
    else:
        run.error = f"rank {rank} raised {message}"
    return run


class RankEnded(Exception):
    """A rank's process ended without its result (killed, crashed, exited)."""


CALLS = ("send", "recv", "sendrecv", "all_reduce", "all_gather")
MAX_RANKS = 8           # the most ranks a lab runs (the answer runtime's pipe pairs)


def run_answer(fn, per_rank_args, allow_collectives=True, time_limit=DEFAULT_TIME_LIMIT):
    """:func:`run_ranks` of a lab's answer: a cell judged in the answer runtime runs one process
    per rank (:class:`Relay`); a function that lives here (a file's, a test's) runs as it is."""
    if not isinstance(fn, CellFunction):
        return run_ranks(fn, per_rank_args, allow_collectives, time_limit)
    channel = fn.channel
    if not isinstance(channel, Ranked):     # one process, one pipe: its ranks would share both
        raise TypeError("a rank lab's cell runs in the answer runtime, one process per rank "
                        "(gemmlab.judging.runtime.judge), not in a code worker")
    channel.fork(len(per_rank_args))
    try:
        return run_ranks(Relay(channel), per_rank_args, allow_collectives, time_limit)
    finally:
        channel.end()


class Relay:
    """Rank r's program when rank r is a process of the answer runtime: it sends the rank its
    arguments, does each comm call the process asks for on the rank's RankComm (what it raises
    for the arguments goes back to be raised there) and returns the rank's result. (An object,
    not a function: an error's line is the cell's, which the process names.)"""

    def __init__(self, channel):
        self.channel = channel

    def __call__(self, comm, *args):
        pipes = self.channel.pipes[comm.rank]

        def alive():
            if comm._world.stop is not None:
                raise Stop()
        loaded = self._next(pipes, alive)
        if not loaded.get("ok") or loaded.get("state") != "value":
            error = loaded.get("error") or {}
            raise RankEnded(f"its cell raised {str(error.get('type'))[:60]}: "
                            f"{str(error.get('message'))[:300]}" if not loaded.get("ok") else
                            f"its cell defines no function ({loaded.get('state')})")
        pipes.write({"args": [values.encode(a) for a in args]}, alive)
        while True:
            message = self._next(pipes, alive)
            if "ask" not in message:
                break
            pipes.write(self.answer(comm, message["ask"]), alive)
        if message.get("ok"):
            return values.decode(message.get("value"))
        raise exception_from(message.get("error") or {})

    @staticmethod
    def _next(pipes, alive):
        message = pipes.next(alive)
        if not isinstance(message, dict) or "ended" in message:
            code = message.get("ended") if isinstance(message, dict) else None
            raise RankEnded(describe_exit(code) if isinstance(code, int) else "no reply")
        return message

    @staticmethod
    def answer(comm, ask):
        """The reply to one comm call the rank's process asked for."""
        call = ask.get("call") if isinstance(ask, dict) else None
        if call not in CALLS:
            raise LabRuleError(f"comm.{str(call)[:40]} is not a comm call")
        try:
            args = [values.decode(a) for a in ask.get("args", [])]
            return {"ok": True, "value": values.encode(getattr(comm, call)(*args))}
        except (TypeError, ValueError) as exc:    # its arguments: raised in the rank's code
            return {"ok": False, "error": {"type": type(exc).__name__, "message": str(exc)}}
