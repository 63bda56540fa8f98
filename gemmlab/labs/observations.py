"""What one instrumented launch did, as plain data, and read back for judging.

The instrumented simulator (:mod:`gemmlab.labs.simulator`) runs a student's kernel in the process
that holds it (in a graded run, a worker that holds nothing but the kernel's source). What it saw
crosses to the judging process as plain data (:func:`as_data`: numbers, strings, lists and NumPy
arrays, which :mod:`gemmlab.judging.values` carries): the arrays after the run, per element and
per thread read and write counts, the races, reads of shared memory nobody wrote, barriers, shared
reads per thread, the fault, the first integer that wrapped in int64, and the observers' records. :class:`Observed` reads that data back
with the interface the lab's checks use (:mod:`gemmlab.labs.feedback`), so verdicts are made
there, from observations, never by code that ran beside the student's.

This module imports no simulator: the judging process may be on a GPU backend.
"""
from dataclasses import dataclass

import numpy as np


class KernelFault(Exception):
    """The kernel did something a GPU would not survive or that cannot be simulated: ``kind`` is
    "out of bounds", "barrier", "warp" (a warp primitive whose mask cannot complete: see
    :mod:`gemmlab.labs.warps`), "exception", "index" or "timeout"; the message names the thread.
    ``thread`` (the block-local id of the thread to blame, or None), ``block``, and for an
    out-of-bounds access ``array``, ``index`` and ``action`` ("read" or "wrote") say it as data."""

    def __init__(self, kind, message, thread=None, block=None, array=None, index=None,
                 action=None):
        super().__init__(message)
        self.kind, self.thread, self.block = kind, thread, block
        self.array, self.index, self.action = array, index, action

    def plain(self):
        """The fault as plain data (see :mod:`gemmlab.labs.observed`)."""
        return {"kind": self.kind, "message": str(self), "thread": self.thread,
                "array": self.array, "index": None if self.index is None else list(self.index),
                "action": self.action}


ATOMIC_NOTE = ("one of the two was a cuda.atomic, and an atomic orders only atomics, not a plain "
               "access beside it: put a barrier between them")


@dataclass
class Race:
    """Two threads touched one element in a way no barrier orders, one of them writing: in one
    block's barrier interval (shared or global memory), or in two blocks of one launch (global
    memory, no atomic)."""
    array: str
    index: tuple
    reader: str            # the thread that read (or, for "write-write", the first writer)
    writer: str
    kind: str              # "read-write" or "write-write"
    had_value: bool        # the element already held a value from an earlier interval
    interval: int          # the barrier interval (-1: two blocks, which no barrier orders)
    block: str             # the block of both threads ("" when the names carry their blocks)
    line: str = ""         # where in the cell the second access was: "line 12 (`...`)"
    reader_id: int = -1    # block-local ids of the two threads (-1: not in the block shown)
    writer_id: int = -1
    read_line: str = ""    # the read's line (for "write-write": the first write's)
    write_line: str = ""   # the write's line
    space: str = "shared"  # "shared" or "global"
    note: str = ""         # why an atomic did not order it, or that two arrays alias

    def plain(self):
        return {"kind": self.kind, "array": self.array, "index": list(self.index),
                "threads": [None if self.reader_id < 0 else self.reader_id,
                            None if self.writer_id < 0 else self.writer_id],
                "interval": self.interval, "space": self.space}

    def describe(self):
        where = f"{self.array}[{', '.join(map(str, self.index))}]"
        of = f" of {self.block}" if self.block else ""
        read_at = f" at {self.read_line}" if self.read_line else ""
        write_at = f" at {self.write_line}" if self.write_line else ""
        when = ("in the same barrier interval" if self.interval >= 0 else
                "in the same launch (no barrier orders two blocks, and a block may run before, "
                "after or beside another)")
        note = f" ({self.note})" if self.note else ""
        if self.kind == "write-write":
            values = "" if ATOMIC_NOTE in self.note else " with different values"
            return (f"{self.reader} and {self.writer}{of} both wrote {where}{values} {when} "
                    f"({self.reader}{read_at}, {self.writer}{write_at}){note}")
        return (f"{self.reader}{of} read {where}{read_at} {when} in which {self.writer} wrote "
                f"it{write_at}{note}")


def as_sentence(text):
    """``text`` ending in a full stop, unless it ends in one already (or in '?' or '!')."""
    return text if text.endswith((".", "?", "!")) else text + "."


def global_race_advice(race):
    """What to do about a race through global memory (``race.space == "global"``), as a sentence
    after :meth:`Race.describe`: a GPU gives no order to those accesses, so the value read is
    whatever happened to be there (sanitizers' racecheck watches shared memory only)."""
    if race.interval < 0:
        return ("No barrier orders two blocks: a block may read only what it wrote itself; to "
                "combine blocks' results, add them with cuda.atomic.add or in a second launch.")
    return ("The threads of a block do not run in step, so a thread may read an element of global "
            "memory before the thread that writes it has run. Hand values between threads "
            "through shared memory, with cuda.syncthreads() between the writes and the reads.")


def thread_name(idx, ndim):
    """'thread 5' in a 1-D block, 'thread (3,1)' in a 2-D one (x first, as threadIdx)."""
    return "thread " + _coords(idx, ndim)


def block_name(idx, ndim):
    return "block " + _coords(idx, ndim)


def _coords(idx, ndim):
    return str(idx[0]) if ndim == 1 else "(" + ",".join(str(i) for i in idx[:ndim]) + ")"


def unflatten(linear, dims):
    x, rest = linear % dims[0], linear // dims[0]
    return (x, rest % dims[1], rest // dims[1])


class Located:
    """Naming threads of a launch of ``grid`` x ``block`` (each (x, y, z))."""

    @property
    def threads_per_block(self):
        return int(np.prod(self.block))

    def locate(self, gid):
        """(block index, thread index) of the thread with global id ``gid``."""
        linear, local = divmod(gid, self.threads_per_block)
        return unflatten(linear, self.grid), unflatten(local, self.block)

    def who(self, gid):
        """'thread (3,1) of block (0,2)' for a global thread id."""
        block, thread = self.locate(gid)
        return f"{thread_name(thread, self.block_ndim)} of {block_name(block, self.grid_ndim)}"


# -- the worker's side: a trace as plain data ------------------------------------------------

def _pairs(mapping):
    """{int: int} as an (n, 2) int64 array."""
    return np.array(sorted(mapping.items()), dtype=np.int64).reshape(-1, 2)


def as_data(trace, arrays, picture=True):
    """Plain data of the simulator's ``trace`` and the ``arrays`` (name -> array) after the run;
    its picture (``trace.observed``) only if ``picture``, else None."""
    globals_ = {}
    for name, array in trace.arrays.items():
        rbw = array.read_before_write
        globals_[name] = {
            "reads": np.array(array.reads, dtype=np.int64), "writes": np.array(array.writes,
                                                                                dtype=np.int64),
            "writer": np.array(array.writer, dtype=np.int64), "shape": list(array.shape),
            "thread_reads": _pairs(array.thread_reads), "thread_writes": _pairs(array.thread_writes),
            "read_before_write": None if rbw is None else [[int(i) for i in rbw[0]], int(rbw[1]),
                                                           str(rbw[2])]}
    fault = trace.fault
    return {
        "grid": list(trace.grid), "block": list(trace.block), "grid_ndim": trace.grid_ndim,
        "block_ndim": trace.block_ndim, "globals": globals_,
        "outputs": {name: np.ascontiguousarray(value) for name, value in arrays.items()},
        "shared": dict(trace.shared),
        "races": [[r.array, list(r.index), r.reader, r.writer, r.kind, r.had_value, r.interval,
                   r.block, r.line, r.read_line, r.write_line, r.space, r.note]
                  for r in trace.races],
        "uninitialized": [[name, list(index), who, block, line]
                          for name, index, who, block, line in trace.uninitialized],
        "barriers": [[list(block), count] for block, count in trace.barriers.items()],
        "read_intervals": [[list(block), count] for block, count in trace.read_intervals.items()],
        "shared_reads": np.array(trace.shared_reads, dtype=np.int64),
        "atomic_chain": max(trace.atomics.values(), default=0),
        "wrapped": trace.wrapped,
        "fault": None if fault is None else _fault_data(fault),
        "observed": {} if trace.observer is None else trace.observer.as_data(),
        "picture": trace.observed if picture else None}


def _fault_data(fault):
    return dict(fault.plain(), block=None if fault.block is None else [int(i) for i in fault.block])


# -- the judging side: the same, read back ----------------------------------------------------

class ObservedArray:
    """A global array's counts, as the lab's checks read them."""

    def __init__(self, data):
        self.shape = tuple(int(n) for n in data["shape"])
        self.reads, self.writes, self.writer = data["reads"], data["writes"], data["writer"]
        self.thread_reads = {int(g): int(c) for g, c in np.asarray(data["thread_reads"])}
        self.thread_writes = {int(g): int(c) for g, c in np.asarray(data["thread_writes"])}
        rbw = data["read_before_write"]
        self.read_before_write = None if rbw is None else (tuple(rbw[0]), int(rbw[1]),
                                                           str(rbw[2]))

    def counts(self, which):
        return np.asarray(getattr(self, which)).reshape(self.shape)


class Observed(Located):
    """A launch's plain data (:func:`as_data`) with the interface of the simulator's trace."""

    def __init__(self, data):
        self.grid, self.block = tuple(data["grid"]), tuple(data["block"])
        self.grid_ndim, self.block_ndim = int(data["grid_ndim"]), int(data["block_ndim"])
        self.arrays = {name: ObservedArray(d) for name, d in data["globals"].items()}
        self.outputs = dict(data["outputs"])
        self.shared = dict(data["shared"])
        self.races = [Race(a, tuple(i), r, w, k, bool(h), int(n), b, str(line),
                           read_line=str(rl), write_line=str(wl), space=str(space),
                           note=str(note))
                      for a, i, r, w, k, h, n, b, line, rl, wl, space, note in data["races"]]
        self.uninitialized = [(name, tuple(index), who, block, str(line))
                              for name, index, who, block, line in data["uninitialized"]]
        self.barriers = {tuple(b): int(c) for b, c in data["barriers"]}
        self.read_intervals = {tuple(b): int(c) for b, c in data["read_intervals"]}
        self.shared_reads = [int(n) for n in np.asarray(data["shared_reads"])]
        self.atomic_chain = int(data["atomic_chain"])  # the most atomics on one address
        self.wrapped = str(data.get("wrapped") or "")  # the first int64 wrap, said (labs.gpu_numbers)
        self.fault = None if data["fault"] is None else _fault_from(data["fault"])
        self.observed = dict(data.get("observed") or {})      # observer name -> its record
        self.picture = data.get("picture")      # one block's run (labs.observed), or None



def _fault_from(data):
    index, block = data.get("index"), data.get("block")
    return KernelFault(str(data["kind"]), str(data["message"]), thread=data.get("thread"),
                       block=None if block is None else tuple(block), array=data.get("array"),
                       index=None if index is None else tuple(index), action=data.get("action"))
