"""Run a student's ``@cuda.jit`` kernel on Numba's CUDA simulator, instrumented.

The kernel runs on the simulator's own ``cuda`` module (thread and block indices, ``cuda.grid``,
local arrays, atomics: :class:`numba.cuda.simulator.kernelapi.FakeCUDAModule`), with the parts
below replaced or added so that the run can be measured and can never hang:

- **Global arrays** are :class:`GlobalArray` wrappers: every read and write is counted per element
  and per thread, and an index outside the array stops the run with a :class:`KernelFault` that
  names the index, the thread and the block. Each element keeps its last writer and its readers
  with their block and barrier interval, as shared memory does: a read of an element another
  thread of the block wrote in the same interval, or another block wrote at all (blocks of one
  launch are ordered by nothing), and a write of one another thread read so, is a :class:`Race`,
  unless both are atomics (``cuda.atomic``). Readers are tracked from the first access, so a
  read before another thread's write in the same interval is found in any order. A write that
  leaves the value as it was changes nothing a reader can see, and is no race.
- **Dynamic shared memory** is the launch's ``shared_bytes``, tracked byte by byte
  (:class:`DynamicBytes`); every ``cuda.shared.array(0, dtype)`` lays its type over the same
  bytes, as on the GPU, so two of them alias and a race through the alias names both arrays.
  **Slices** (``s[0:8]``, ``a[i:]``) are views (:mod:`gemmlab.labs.views`) whose accesses are the
  array's own.
- **Atomics** (``cuda.atomic``) are no race among themselves; an atomic and a plain access of one
  element that nothing orders are one, whichever came first, named with both lines.
- **Warp primitives** (``syncwarp``, ``shfl_*_sync``, the votes, ``activemask``): a thread waits
  at one like at a barrier of its warp, and the lanes its mask names complete it together, with
  the GPU's rules (:mod:`gemmlab.labs.warps`); a mask naming a lane that exited, or a shuffle
  reading one, stops the run with a "warp" fault. A ``syncwarp`` orders the accesses of its
  warp's threads (the race check counts each warp's syncwarps).
- **Shared arrays** are :class:`SharedArray` wrappers: every access is tagged with the thread and
  its *barrier interval* (how many ``syncthreads`` the block has passed). A read of an element
  another thread wrote in the same interval, or a write of one another thread read in it, is a
  :class:`Race`; a read of an element no thread of the block has written yet is recorded too.
  Every ``cuda.shared.array`` call (each call site of the code, two on one line included) is an
  allocation of its own.
- **What a GPU leaves undefined is made visible on purpose.** Shared memory starts every block
  as garbage (NaN for floats, random bits for integers), and so do local arrays; within a barrier
  interval the threads of a block run in the order the launch's ``schedule`` says (forward,
  reversed or shuffled, seeded), and so do the blocks of the grid. A kernel whose result depends
  on that order, or on a value nobody wrote, gets a different answer under another schedule, as
  it would on a GPU from run to run.
- **Scheduling.** The simulator starts one OS thread per CUDA thread and lets them all run; its
  barrier waits until every live thread arrives, so a ``syncthreads`` that some thread never
  reaches hangs it. Here each CUDA thread is a greenlet (a coroutine) of the caller's thread, and
  the threads of a block take turns: each runs until it reaches a barrier or finishes, then hands
  control back. When every thread has had its turn, either all wait at the same barrier (the
  block crosses it, the interval count goes up), or all finished, or the barrier is not reached
  by every thread (some finished, or they wait at different barriers): the run stops with a
  fault that says which. Turn-taking makes the run deterministic, needs no locks, and switching
  a greenlet costs a microsecond where waking an OS thread costs tens of them (more on a busy
  machine): the instrumented run is faster than the plain simulator. The order of the turns is
  the schedule's; it does not change what a race-free kernel computes.

- **Numbers are the GPU's.** While a launch runs, the kernel and the device functions of its
  module run a body compiled again from their source in which arithmetic, comparisons and math
  calls compute in the types numba gives them: integers wrap to int64, ``float32 + float`` is
  float64, an int meets a float as float64 (:mod:`gemmlab.labs.gpu_numbers`); the first int64
  wrap is kept in ``trace.wrapped``, said, for the feedback of a check that fails.

A run that takes longer than its time limit (an endless loop) is stopped too
(:class:`gemmlab.labs.watchdog.Watchdog`).

Every access is also handed to a :class:`gemmlab.labs.observed.BlockRecorder`, which keeps one
block's accesses and barriers as plain data (``trace.observed``): the picture of the run.
"""
import ast
import contextlib
import gc
import linecache
import math
import operator
import sys
from dataclasses import dataclass, field

import greenlet
import numpy as np

from .. import device
from .gpu_numbers import gpu_arithmetic
from .local_arrays import local_array
from .limits import Stop, seconds, where
from .observations import ATOMIC_NOTE, KernelFault, Located, Race, block_name, thread_name
from .observed import FAULT, PLAIN, RACE, UNWRITTEN, BlockRecorder
from .views import Elements, Reinterpreted, slice_of
from .warps import FULL_MASK, Request, WarpError, step
from .watchdog import Watchdog

device.backend()   # the simulator modules below exist only once the backend is chosen
from numba.cuda.simulator import kernel as _sim_kernel  # noqa: E402
from numba.cuda.simulator.kernelapi import Dim3, FakeCUDAModule, swapped_cuda_module  # noqa: E402

MAX_RACES = 20          # races kept per run (the first one is what feedback quotes)
MAX_ARRAY_BYTES = 512 * 1024    # a thread's local memory at most; a block's shared memory: 227 KiB
DEFAULT_TIME_LIMIT = 60.0
EPOCH = 1 << 24         # block number * EPOCH + barrier interval: when in the launch an access was
SCHEDULES = ("forward", "reversed", "shuffled")


@dataclass
class Trace(Located):
    """What one instrumented launch did (:func:`gemmlab.labs.observations.as_data` makes it
    plain data)."""
    grid: tuple
    block: tuple
    arrays: dict                        # name -> GlobalArray
    shared: dict = field(default_factory=dict)         # name -> total reads over all blocks
    races: list = field(default_factory=list)
    uninitialized: list = field(default_factory=list)  # (array, index, thread, block, line) of
    #                                                    reads of shared elements nobody had written
    barriers: dict = field(default_factory=dict)       # block -> barriers crossed
    shared_reads: list = field(default_factory=list)   # per global thread id
    fault: KernelFault = None
    observer: object = None             # what watched the run, when one was given
    observed: dict = None               # one block's accesses as plain data (labs.observed)
    read_intervals: dict = field(default_factory=dict)  # block -> intervals with shared reads
    atomics: dict = field(default_factory=dict)         # (array, index) -> atomics on it
    wrapped: str = ""                   # the first integer int64 wrapped, said (labs.gpu_numbers)
    grid_ndim: int = 2
    block_ndim: int = 2


def _dims(d):
    """A launch dimension as given (int or tuple) -> (x, y, z) and how many were given."""
    d = tuple(int(v) for v in (d if isinstance(d, tuple) else (d,)))
    return d + (1,) * (3 - len(d)), len(d)


class _Indexer:
    """Row-major flat index of an element, with the checks a student needs to hear about."""
    __slots__ = ("name", "shape", "launch")

    def base_of(self):
        """The tracked array a slice of this one is a view of (:func:`.views.slice_of`)."""
        return self

    def units_of(self):
        return np.arange(self.size).reshape(self.shape)

    def flat(self, index, action):
        """The flat index of ``index``: at once for whole numbers inside the array, one per
        dimension (nearly every access), else through :meth:`checked_flat`."""
        shape = self.shape
        if type(index) is tuple:
            if len(index) == 2 == len(shape):
                i, j = index
                if (type(i) is int and type(j) is int and 0 <= i < shape[0]
                        and 0 <= j < shape[1]):
                    return i * shape[1] + j
            elif len(index) == 3 == len(shape):
                i, j, k = index
                if (type(i) is int and type(j) is int and type(k) is int and 0 <= i < shape[0]
                        and 0 <= j < shape[1] and 0 <= k < shape[2]):
                    return (i * shape[1] + j) * shape[2] + k
        elif type(index) is int and len(shape) == 1 and 0 <= index < shape[0]:
            return index
        return self.checked_flat(index, action)

    def checked_flat(self, index, action):
        """As :meth:`flat`, with the checks; -1 for an index with a slice (``s[0:8]``,
        ``a[i, :]``), which takes a view the caller makes (:func:`.views.slice_of`). Fewer
        indices than dimensions is a mistake here, not a row: ``A[row * K + k]`` of a matrix is
        the flattened index a GPU course's student writes by habit."""
        shape = self.shape
        if type(index) is not tuple:
            index = (index,)
        if any(type(i) is slice for i in index):
            return -1
        if len(index) != len(shape):
            self.launch.fail("index", f"{self.launch.who()} indexed {self.name} with "
                             f"{len(index)} index(es), but {self.name} has {len(shape)} "
                             f"dimensions: write {self.name}[{', '.join('i j k'.split()[:len(shape)])}]")
        flat = 0
        for i, dim in zip(index, shape, strict=True):
            try:
                i = operator.index(i)
            except TypeError:
                self.launch.fail("index", f"{self.launch.who()} indexed {self.name} with "
                                 f"{index!r}: indices must be whole numbers or slices")
            if i < 0 or i >= dim:
                self.launch.out_of_bounds(self, action, index)
            flat = flat * dim + i
        return flat


class GlobalArray(_Indexer):
    """A kernel argument in global memory, counting reads and writes per element and per thread,
    and keeping each element's last writer and latest readers (with when and where) to find the
    accesses no barrier orders (see the module). Readers are tracked from the first access, so
    a read that comes before another thread's write in the same interval is found in any order."""
    __slots__ = ("_flat_data", "reads", "writes", "writer", "w_gid", "thread_reads",
                 "thread_writes", "read_before_write", "ndim", "size", "dtype", "w_epoch",
                 "w_line", "w_atomic", "w_gen", "a_other", "a_line", "r_epoch", "r_gid",
                 "r_line", "r_gen", "r_other", "r_oline", "r_block_gid", "r_block_line")

    def __init__(self, launch, name, data):
        self.launch, self.name = launch, name
        self.shape, self.ndim, self.size, self.dtype = data.shape, data.ndim, data.size, data.dtype
        self._flat_data = data.reshape(-1)
        n = data.size
        self.reads = [0] * n
        self.writes = [0] * n
        self.writer = [-1] * n                  # global id of the last thread that wrote it
        self.w_gid = [-1] * n                   # ... and changed it (what a reader may see)
        self.thread_reads = {}
        self.thread_writes = {}
        self.read_before_write = None           # (index, thread, line) of the first such read
        self.w_epoch, self.w_line, self.w_atomic = [-1] * n, [0] * n, [False] * n
        self.w_gen = [0] * n                    # the writer's warp generation (see Launch)
        self.a_other, self.a_line = [-1] * n, [0] * n   # an earlier atomic writer of that epoch
        self.r_epoch, self.r_gid, self.r_line = [-1] * n, [-1] * n, [0] * n
        self.r_gen = [0] * n
        self.r_other, self.r_oline = [-1] * n, [0] * n      # a second reader of that epoch
        self.r_block_gid, self.r_block_line = [-1] * n, [0] * n  # a reader of an earlier block

    def __len__(self):
        return self.shape[0]

    def __getitem__(self, index):
        e = self.flat(index, "read")
        if e < 0:
            return slice_of(self, index)
        caller = sys._getframe(1)       # where, as (code, offset): f_lineno costs a table walk
        return self.read_unit(e, (caller.f_code, caller.f_lasti), index)

    def __setitem__(self, index, value):
        e = self.flat(index, "wrote")
        if e < 0:
            slice_of(self, index).assign(value, sys._getframe(1).f_lineno)
        else:
            self.write_unit(e, value, sys._getframe(1).f_lineno)

    def read_unit(self, e, line, index=None):
        """Read element ``e`` (row-major) at the kernel's ``line`` (a number, or (code, offset):
        see :func:`_line_number`): counted, checked against
        the element's writers, and recorded as a reader of this epoch (inline: most reads are of
        inputs no thread writes, and this is the labs' hottest path)."""
        launch = self.launch
        t = launch.current
        g, now, atomic = t.gid, launch.epoch, launch.in_atomic
        if atomic:
            line = launch.atomic_line
        launch.recorder.access(t.local_id, launch.interval, "r", self.name, e)
        self.reads[e] += 1
        self.thread_reads[g] = self.thread_reads.get(g, 0) + 1
        if self.writes[e] == 0:
            if self.read_before_write is None:
                self.read_before_write = (np.unravel_index(e, self.shape), g,
                                          launch.cell_line())
        elif self.w_gid[e] != -1:
            self._check_read(e, g, line, now, atomic)
        if not atomic:                      # (an atomic's read is checked with its write)
            r_epoch = self.r_epoch
            then = r_epoch[e]
            if then != now:
                if then != -1 and then // EPOCH != now // EPOCH:
                    self.r_block_gid[e], self.r_block_line[e] = self.r_gid[e], self.r_line[e]
                r_epoch[e], self.r_gid[e], self.r_line[e], self.r_other[e] = now, g, line, -1
                self.r_gen[e] = launch.block_run.warp_gens[t.local_id >> 5]
            elif self.r_gid[e] != g and self.r_other[e] == -1:
                self.r_other[e], self.r_oline[e] = g, line
        if launch.observer is not None:
            launch.observer.global_read(t, self.name, np.unravel_index(e, self.shape)
                                        if index is None else index)
        return self._flat_data[e]

    def _check_read(self, e, g, line, now, atomic):
        """A read of an element another thread changed where nothing orders the two."""
        writer, then = self.w_gid[e], self.w_epoch[e]
        if writer == g and then == now and self.w_atomic[e] and not atomic:
            writer = self.a_other[e]        # another thread's atomic, before this one's own
        if writer != -1 and writer != g and not (atomic and self.w_atomic[e]) and \
                (then == now or then // EPOCH != now // EPOCH) and \
                self.launch.unordered(writer, then, self.w_gen[e]):
            self.launch.global_race(
                self, e, g, writer, "read-write", line,
                self.a_line[e] if writer != self.w_gid[e] else self.w_line[e],
                self.w_atomic[e] or atomic)

    def write_unit(self, e, value, line):
        """Write ``value`` into element ``e`` (row-major) at the kernel's ``line``."""
        launch = self.launch
        t = launch.current
        g, now, atomic = t.gid, launch.epoch, launch.in_atomic
        if atomic:
            line = launch.atomic_line
        launch.recorder.access(t.local_id, launch.interval, "w", self.name, e)
        self._check_write(e, g, now, line, value, atomic)
        self.writes[e] += 1
        self.writer[e] = g
        self.thread_writes[g] = self.thread_writes.get(g, 0) + 1
        if atomic or self.w_gid[e] == -1 or self._flat_data[e] != np.asarray(value, self.dtype):
            if atomic and self.w_atomic[e] and self.w_epoch[e] == now and self.w_gid[e] != g:
                self.a_other[e], self.a_line[e] = self.w_gid[e], self.w_line[e]
            elif self.w_epoch[e] != now:
                self.a_other[e] = -1
            self.w_gid[e], self.w_epoch[e], self.w_line[e] = g, now, line
            self.w_atomic[e], self.w_gen[e] = atomic, launch.warp_gen()
        # (a write that leaves the value as it was changes nothing a reader can see)
        self._flat_data[e] = value

    def _check_write(self, e, g, now, line, value, atomic):
        """A write of an element another thread read, or wrote with another value or with an
        atomic, where no barrier orders the two (the same interval of one block, or two blocks).
        Atomics among themselves are no race; an atomic beside a plain access is."""
        launch, block = self.launch, now // EPOCH
        then = self.r_epoch[e]
        if then != -1 and (then == now or then // EPOCH != block):
            reader, at = ((self.r_gid[e], self.r_line[e]) if self.r_gid[e] != g else
                          (self.r_other[e], self.r_oline[e]))
            if reader != -1 and launch.unordered(reader, then, self.r_gen[e]) and \
                    (atomic or self._flat_data[e] != np.asarray(value, self.dtype)):
                launch.global_race(self, e, reader, g, "read-write", at, line,
                                   atomic)
        if self.r_block_gid[e] != -1 and self.r_block_gid[e] // launch.threads_per_block != \
                block:
            launch.global_race(self, e, self.r_block_gid[e], g, "read-write",
                               self.r_block_line[e], line, atomic)
        if atomic:
            return                      # its read checked the plain writes before it
        writer, then = self.w_gid[e], self.w_epoch[e]
        if writer == g and then == now and self.w_atomic[e]:
            writer = self.a_other[e]
        if (writer != -1 and writer != g and (then == now or then // EPOCH != block)
                and (self.w_atomic[e] or self._flat_data[e] != np.asarray(value, self.dtype))
                and launch.unordered(writer, then, self.w_gen[e])):
            launch.global_race(self, e, writer, g, "write-write", self.w_line[e], line,
                               self.w_atomic[e])

    def counts(self, which):
        return np.array(getattr(self, which)).reshape(self.shape)


class SharedArray(Elements, _Indexer):
    """One block's shared array: every access tagged with the thread and its barrier interval
    (and the warp generation: a ``syncwarp`` orders the accesses of one warp's threads)."""
    __slots__ = ("dtype", "_flat_data", "ndim", "size", "w_interval", "w_thread", "first_w",
                 "r_interval", "r_thread", "r_other", "w_line", "r_line", "r_oline", "w_gen",
                 "r_gen", "w_atomic", "a_other", "a_line")

    def __init__(self, launch, name, shape, dtype, data=None):
        self.launch, self.name = launch, name
        if data is None:
            data = launch.garbage(shape, dtype)               # shared memory starts as garbage
        self.shape, self.dtype, self.ndim, self.size = data.shape, data.dtype, data.ndim, data.size
        self._flat_data = data.reshape(-1)
        n = data.size
        self.w_interval = [-1] * n      # interval of the last write
        self.w_thread = [-1] * n        # block-local id of the last writer
        self.first_w = [-1] * n         # interval of the first write
        self.r_interval = [-1] * n      # interval of the latest reads
        self.r_thread = [-1] * n        # a thread that read in that interval
        self.r_other = [-1] * n         # a second, different reader in that interval
        self.w_line, self.r_line, self.r_oline = [0] * n, [0] * n, [0] * n   # their lines
        self.w_gen, self.r_gen = [0] * n, [0] * n       # warp generations of the accesses
        self.w_atomic = [False] * n
        self.a_other, self.a_line = [-1] * n, [0] * n   # an earlier atomic writer of the interval

    def __len__(self):
        return self.shape[0]

    def label(self, e):
        """(name, index) of element ``e`` in a report."""
        return self.name, tuple(int(i) for i in np.unravel_index(e, self.shape))

    unit = _Indexer.flat          # (Elements indexes through it)

    def read_unit(self, e, line):
        """Read element ``e`` (row-major) at the kernel's ``line``: recorded and checked."""
        launch = self.launch
        thread = launch.current
        t, now = thread.local_id, launch.interval
        if launch.in_atomic:
            line = launch.atomic_line
        launch.recorder.access(t, now, "r", self.name, e)
        self.check_read(e, t, now, line, launch.in_atomic)
        launch.count_shared_read(self.name)
        value = self._flat_data[e]
        if launch.observer is not None:
            launch.observer.shared_read(thread, value, now)
        return value

    def check_read(self, e, t, now, line, atomic):
        """Thread ``t`` reads unit ``e`` in interval ``now`` (``atomic``: an atomic's read)."""
        launch = self.launch
        if self.w_interval[e] == now:
            writer, at = self.w_thread[e], self.w_line[e]
            if writer == t and self.w_atomic[e] and not atomic:
                writer, at = self.a_other[e], self.a_line[e]
            if (writer != -1 and writer != t and not (atomic and self.w_atomic[e])
                    and launch.unordered_in_block(writer, self.w_gen[e])):
                launch.race(self, e, reader=t, writer=writer, kind="read-write",
                            had_value=self.first_w[e] < now, lines=(line, at), other="w",
                            atomic=self.w_atomic[e] or atomic)
        elif self.first_w[e] == -1:
            launch.uninitialized_read(self, e)
        if atomic:
            return                          # an atomic's read is checked with its write
        if self.r_interval[e] != now:
            self.r_interval[e], self.r_thread[e], self.r_other[e] = now, t, -1
            self.r_line[e], self.r_gen[e] = line, launch.block_run.warp_gens[t >> 5]
        elif self.r_thread[e] != t and self.r_other[e] == -1:
            self.r_other[e], self.r_oline[e] = t, line

    def write_unit(self, e, value, line):
        """Write ``value`` into element ``e`` (row-major) at the kernel's ``line``."""
        launch = self.launch
        t, now = launch.current.local_id, launch.interval
        if launch.in_atomic:
            line = launch.atomic_line
        launch.recorder.access(t, now, "w", self.name, e)
        self.check_write(e, t, now, line, launch.in_atomic,
                         lambda: self._flat_data[e] != np.asarray(value, self.dtype))
        self._flat_data[e] = value
        if launch.observer is not None:
            launch.observer.shared_write(launch.current, self._flat_data[e], now)

    def check_write(self, e, t, now, line, atomic, changes):
        """Thread ``t`` writes unit ``e`` in interval ``now``; ``changes()``: whether the value
        written differs from the one there (a plain write of the same value is benign)."""
        launch = self.launch
        if self.r_interval[e] == now:
            other, at = ((self.r_thread[e], self.r_line[e]) if self.r_thread[e] != t else
                         (self.r_other[e], self.r_oline[e]))
            if other != -1 and launch.unordered_in_block(other, self.r_gen[e]) and \
                    (atomic or changes()):
                launch.race(self, e, reader=other, writer=t, kind="read-write",
                            had_value=self.first_w[e] != -1 and self.first_w[e] < now,
                            lines=(at, line), other="r", atomic=atomic)
        if self.w_interval[e] == now and not atomic:
            writer, at = self.w_thread[e], self.w_line[e]
            if writer == t and self.w_atomic[e]:
                writer, at = self.a_other[e], self.a_line[e]
            if (writer != -1 and writer != t and (self.w_atomic[e] or changes())
                    and launch.unordered_in_block(writer, self.w_gen[e])):
                launch.race(self, e, reader=writer, writer=t, kind="write-write",
                            had_value=self.first_w[e] < now, lines=(at, line), other="w",
                            atomic=self.w_atomic[e])
        if not atomic and self.first_w[e] != -1 and not changes():
            return          # the value stays as it was: nothing a reader sees changes
        if atomic and self.w_interval[e] == now and self.w_atomic[e] and self.w_thread[e] != t:
            self.a_other[e], self.a_line[e] = self.w_thread[e], self.w_line[e]
        elif self.w_interval[e] != now:
            self.a_other[e] = -1
        self.w_interval[e], self.w_thread[e], self.w_line[e] = now, t, line
        self.w_atomic[e], self.w_gen[e] = atomic, launch.warp_gen()
        if self.first_w[e] == -1:
            self.first_w[e] = now


class DynamicBytes(SharedArray):
    """A block's dynamic shared memory, ``nbytes`` of garbage (every bit set: NaN as a float,
    -1 as an integer) tracked byte by byte; the ``cuda.shared.array(0, dtype)`` arrays over it
    (:class:`.views.Reinterpreted`) say which of them, and which element, an access went through,
    so that a report names the array the kernel used, and the other one where two alias."""
    __slots__ = ("viewing", "r_label", "w_label")

    def __init__(self, launch, nbytes):
        data = np.full(int(nbytes), 0xFF, np.uint8)
        super().__init__(launch, "dynamic shared memory", data.shape, np.uint8, data=data)
        self.viewing = None
        self.r_label, self.w_label = [None] * data.size, [None] * data.size

    def label(self, e):
        name, k = self.viewing
        return name, (k,)

    def alias_note(self, e, other):
        """A clause saying that the other access (``other``: "r" its read, "w" its write) went
        through another array, or ''."""
        other = self.w_label[e] if other == "w" else self.r_label[e]
        if other is None or other == self.viewing:
            return ""
        return (f"{other[0]}[{other[1]}] and {self.viewing[0]}[{self.viewing[1]}] share bytes: "
                f"every cuda.shared.array(0, ...) starts at the same byte of the launch's "
                f"dynamic shared memory")


class _Allocations:
    """``cuda.shared.array`` for one block: one allocation per call site (the code and the
    instruction of the call, so two calls on one line are two arrays, and a call in a loop is one
    array, as a static declaration is), named after the variable it is assigned to."""

    def __init__(self, launch):
        self.launch = launch
        self.arrays = {}
        self.dynamic = None     # the block's dynamic shared memory, made at its first use

    def array(self, shape, dtype, alignment=None):      # alignment is a GPU layout hint
        caller = sys._getframe(1)
        key = (caller.f_code, caller.f_lasti)
        found = self.arrays.get(key)
        if found is None:
            name = _allocation_name(caller.f_code, caller.f_lasti)
            taken = {a.name for a in self.arrays.values()} | set(self.launch.trace.arrays)
            if name in taken:
                name = next(f"{name} ({n})" for n in range(2, len(taken) + 3)
                            if f"{name} ({n})" not in taken)
            if type(shape) is int and shape == 0:       # dynamic: the launch's bytes
                found = self._dynamic_array(_np_dtype(dtype), name)
            else:
                found = SharedArray(self.launch, name, shape, _np_dtype(dtype))
            self.arrays[key] = found
        return found

    def _dynamic_array(self, dtype, name):
        """A ``cuda.shared.array(0, dtype)``: the block's dynamic bytes seen as ``dtype``."""
        if self.dynamic is None:
            self.dynamic = DynamicBytes(self.launch, self.launch.shared_bytes)
        return Reinterpreted(self.dynamic, dtype, self.dynamic.size // dtype.itemsize, name)


class _Locals:
    """``cuda.local.array``: undefined until written (registers start so on a GPU), a read of an
    element the thread never wrote being a fault (:mod:`gemmlab.labs.local_arrays`), or the
    observer's arrays."""

    def __init__(self, launch):
        self.launch = launch

    def array(self, shape, dtype, alignment=None):
        caller = sys._getframe(1)
        data = local_array(self.launch.garbage(shape, _np_dtype(dtype)),
                           self.launch.unwritten_local, (caller.f_code, caller.f_lasti))
        observer = self.launch.observer
        return data if observer is None else observer.local_array(self.launch, data)


class _Atomics:
    """``cuda.atomic``: the simulator's own, with the accesses marked as atomic (two atomics on
    one element are no race)."""

    def __init__(self, launch, atomics):
        self._launch, self._atomics = launch, atomics

    def __getattr__(self, name):
        operation = getattr(self._atomics, name)
        launch = self._launch

        def atomic(*args, **kwargs):
            address = (id(args[0]), repr(args[1:2]))       # atomics on one address: a chain
            launch.trace.atomics[address] = launch.trace.atomics.get(address, 0) + 1
            launch.atomic_line = sys._getframe(1).f_lineno      # the kernel's line
            launch.in_atomic = True
            try:
                return operation(*args, **kwargs)
            finally:
                launch.in_atomic = False
        return atomic


def _np_dtype(dtype):
    """The NumPy dtype of a shared or local array's dtype: NumPy's own, or Numba's type (told
    apart without ``numba.cuda.types.Type``, which numba-cuda 0.20, macOS's, lacks)."""
    from numba.cuda.np import numpy_support
    if isinstance(dtype, (str, type, np.dtype)):
        return np.dtype(dtype)
    return numpy_support.as_dtype(dtype)


def _allocation_name(code, lasti, space="shared"):
    """The variable a ``cuda.shared.array`` (or ``local``) call is assigned to (``a, b = call(),
    call()``: the one in the call's position), or 'the shared array of line L'."""
    lineno, _, column, _ = list(code.co_positions())[lasti // 2]   # one per 2-byte code unit
    line = linecache.getline(code.co_filename, lineno or 0)
    fallback = f"the {space} array of line {lineno}"
    try:
        statement = ast.parse(line.strip()).body[0]
    except (SyntaxError, IndexError):
        return fallback
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
        return fallback
    target, value = statement.targets[0], statement.value
    if isinstance(target, ast.Name):
        return target.id
    if (isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple)
            and len(target.elts) == len(value.elts) and column is not None):
        indent = len(line) - len(line.lstrip())
        for name, part in zip(target.elts, value.elts, strict=True):
            if (isinstance(name, ast.Name)
                    and part.col_offset + indent <= column < part.end_col_offset + indent):
                return name.id
    return fallback


class _InstrumentedCuda(FakeCUDAModule):
    """The simulator's in-kernel ``cuda`` module with instrumented shared memory and barriers.
    The simulated threads are greenlets of one OS thread, so the thread and block indices come
    from the launch's current thread rather than from ``threading.current_thread()``."""

    def __init__(self, launch, grid, block):
        super().__init__(grid, block, 0)
        self._launch = launch
        self._local = _Locals(launch)
        self._atomic = _Atomics(launch, self._atomic)

    @property
    def threadIdx(self):
        return self._launch.current.threadIdx

    @property
    def blockIdx(self):
        return self._launch.current.blockIdx

    @property
    def laneid(self):
        return self._launch.current.local_id % 32

    @property
    def shared(self):
        return self._launch.block_run.allocations

    def syncthreads(self):
        self._launch.current.barrier(sys._getframe(1))

    def _vote(self, value, combine):
        votes = self._launch.block_run.votes
        votes[self._launch.current.local_id] = bool(value)
        self.syncthreads()
        result = combine(votes.values())
        self.syncthreads()
        return result

    def _warp(self, kind, mask, value=None, arg=0):
        return self._launch.current.warp_op(Request(kind, mask, value, arg, _site_text(
            _barrier_site(sys._getframe(2), self._launch.fn.__code__))))

    def syncwarp(self, mask=FULL_MASK):
        self._warp("syncwarp", mask)

    def shfl_sync(self, mask, value, src_lane):
        return self._warp("shfl_sync", mask, value, src_lane)

    def shfl_up_sync(self, mask, value, delta):
        return self._warp("shfl_up_sync", mask, value, delta)

    def shfl_down_sync(self, mask, value, delta):
        return self._warp("shfl_down_sync", mask, value, delta)

    def shfl_xor_sync(self, mask, value, lane_mask):
        return self._warp("shfl_xor_sync", mask, value, lane_mask)

    def all_sync(self, mask, predicate):
        return self._warp("all_sync", mask, predicate)

    def any_sync(self, mask, predicate):
        return self._warp("any_sync", mask, predicate)

    def eq_sync(self, mask, predicate):
        return self._warp("eq_sync", mask, predicate)

    def ballot_sync(self, mask, predicate):
        return self._warp("ballot_sync", mask, predicate)

    def match_any_sync(self, mask, value):
        return self._warp("match_any_sync", mask, value)

    def match_all_sync(self, mask, value):
        return self._warp("match_all_sync", mask, value)

    def activemask(self):
        return self._warp("activemask", FULL_MASK)

    def popc(self, value):
        """Set bits of ``value`` in its width (a negative int32, such as a ballot naming lane
        31, has 32 bits; Numba's simulator counts those of its absolute value)."""
        bits = np.dtype(value.dtype).itemsize * 8 if isinstance(value, np.generic) else 64
        return (int(value) & ((1 << bits) - 1)).bit_count()

    def lanemask_lt(self):
        return np.uint32((1 << (self._launch.current.local_id % 32)) - 1)

    def syncthreads_count(self, value):
        return self._vote(value, sum)

    def syncthreads_and(self, value):
        return self._vote(value, lambda v: int(all(v)))

    def syncthreads_or(self, value):
        return self._vote(value, lambda v: int(any(v)))


READY, RUNNING, WAITING, DONE, STOPPED, FAILED, AT_WARP = range(7)


class _SimThread:
    """One CUDA thread: a greenlet that runs the kernel until it reaches a barrier or ends,
    then hands control back to the block's scheduler."""

    def __init__(self, block_run, thread_idx, local_id):
        launch = block_run.launch
        self.block_run, self.launch = block_run, launch
        self.threadIdx, self.blockIdx = Dim3(*thread_idx), Dim3(*block_run.idx)
        self.local_id = local_id
        self.gid = block_run.linear * launch.threads_per_block + local_id
        self.name_ = thread_name(thread_idx, launch.block_ndim)
        self.glet = greenlet.greenlet(self._main, parent=launch.scheduler)
        self.state, self.site, self.error = READY, None, None
        self.request = self.result = None       # a warp primitive's (labs.warps)

    def _main(self):
        try:
            self.launch.fn(*self.launch.args)
            self.state = DONE
        except Stop as stop:                  # kept: its traceback says where the thread stood
            self.state, self.error = STOPPED, stop
        except BaseException as exc:          # the student's code: reported, never raised here
            self.state, self.error = FAILED, exc

    def warp_op(self, request):
        """Wait at a warp primitive until the lanes it names arrive; what it returns here."""
        self.request, self.state = request, AT_WARP
        self.launch.scheduler.switch()
        self.state, self.request = RUNNING, None
        return self.result

    def barrier(self, frame):
        self.site = _barrier_site(frame, self.launch.fn.__code__)
        self.state = WAITING
        self.launch.scheduler.switch()
        self.state = RUNNING


def _barrier_site(frame, kernel_code):
    """Where a thread waits: the chain of (file, line) from the kernel down to the barrier call,
    so one syncthreads in a device function called from two places is two barriers."""
    site = []
    while frame is not None:
        site.append((frame.f_code.co_filename, frame.f_lineno))
        if frame.f_code is kernel_code:
            break
        frame = frame.f_back
    return tuple(site)


class _BlockRun:
    def __init__(self, launch, idx, linear):
        self.launch, self.idx, self.linear = launch, idx, linear
        self.name = block_name(idx, launch.grid_ndim)
        self.allocations = _Allocations(launch)
        self.votes = {}
        self.warp_gens = [0] * ((launch.threads_per_block + 31) // 32)   # syncwarps crossed
        self.threads = [_SimThread(self, t, i)
                        for i, t in enumerate(_thread_order(launch.block))]


@contextlib.contextmanager
def _collector_sees_only_the_run():
    """While a launch runs, Python's cycle collector leaves alone the objects that were there
    before it (``gc.freeze``, undone after the run). A run makes tens of thousands of objects
    (greenlets, local arrays, the observers' records), enough to set off a full collection now
    and then, which walks the whole heap: the modules Numba loaded and what the process did
    before (a notebook's other checks), 0.1-0.3 s a walk after a dozen checks. Frozen, such a walk
    is of the run's own objects. Garbage that reaches into the older objects waits for the first
    full collection after the run. A process that froze objects itself keeps its freeze."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


@contextlib.contextmanager
def _direct_device_calls(fn, module):
    """While a launch runs, a device function the kernel reaches (a global of the kernel's module
    or a variable a function closes over, and so on down the calls) is called as the plain
    function it wraps. The simulator's wrapper of a device function swaps the ``cuda`` of its
    module for the launch's ``module`` on every call (a scan of the module's globals, about 4 us
    a call: a sixth of a GEMM lab's run, a quarter of the ladder's two-level rung, whose device
    functions live in another module). Here that swap is made once per module for the whole
    launch: the kernel's module by the launch itself, any other module's on first sight. Put back
    after the run, whatever happened."""
    home, replaced, seen, todo = fn.__globals__, [], set(), [fn]
    swapped = {id(home)}

    def direct(value):
        if not (isinstance(value, _sim_kernel.FakeCUDAKernel) and value._device
                and isinstance(getattr(value.fn, "__globals__", None), dict)):
            return False
        if id(value.fn.__globals__) not in swapped:        # its module's cuda: the launch's
            swapped.add(id(value.fn.__globals__))
            stack.enter_context(swapped_cuda_module(value.fn, module))
        return True
    stack = contextlib.ExitStack()
    try:
        for name, value in list(home.items()):
            if direct(value):
                home[name] = value.fn
                replaced.append((home, name, value))
                todo.append(value.fn)
        while todo:
            f = todo.pop()
            if id(f) in seen:
                continue
            seen.add(id(f))
            for cell in getattr(f, "__closure__", None) or ():
                try:
                    value = cell.cell_contents
                except ValueError:          # a cell not filled yet
                    continue
                if direct(value):
                    cell.cell_contents = value.fn
                    replaced.append((cell, None, value))
                    todo.append(value.fn)
        yield
    finally:
        for where, name, value in reversed(replaced):
            if name is None:
                if where.cell_contents is value.fn:
                    where.cell_contents = value
            elif where.get(name) is value.fn:
                where[name] = value
        stack.close()


def _module_functions(fn):
    """``fn`` and the Python functions of the device functions of its module (which the launch
    computes in numba's types with it, :mod:`gemmlab.labs.gpu_numbers`)."""
    return [fn] + [value.fn for value in list(fn.__globals__.values())
                   if isinstance(value, _sim_kernel.FakeCUDAKernel) and value._device
                   and getattr(value.fn, "__globals__", None) is fn.__globals__]


def _thread_order(block):
    """Thread (or block) indices in linear order: x fastest, then y, then z (as CUDA numbers
    them)."""
    bx, by, bz = block
    return [(x, y, z) for z in range(bz) for y in range(by) for x in range(bx)]


class Launch:
    """One instrumented launch of ``kernel[grid, block](*args)`` (use :func:`simulate`)."""

    def __init__(self, kernel, grid, block, args, time_limit, observer, schedule=None,
                 shared_bytes=0):
        self.fn = kernel.py_func
        self.shared_bytes = _shared_bytes(shared_bytes)
        self.order, seed = _schedule(schedule)
        self.rng = np.random.default_rng(seed)
        self.in_atomic, self.atomic_line = False, 0
        (self.grid, self.grid_ndim), (self.block, self.block_ndim) = _dims(grid), _dims(block)
        self.threads_per_block = int(np.prod(self.block))
        self.observer = observer
        self.args, arrays = [], {}
        for name, value in args:
            if isinstance(value, np.ndarray):
                if not value.flags.c_contiguous:
                    raise ValueError(f"{name} must be C-contiguous: the run writes into it")
                value = arrays[name] if name in arrays else GlobalArray(self, name, value)
                arrays[name] = value
            self.args.append(value)
        self.trace = Trace(self.grid, self.block, arrays, observer=observer,
                           shared_reads=[0] * (self.threads_per_block * int(np.prod(self.grid))),
                           grid_ndim=self.grid_ndim, block_ndim=self.block_ndim)
        self.time_limit = time_limit
        self.scheduler = greenlet.getcurrent()
        self.current = None
        self.block_run = None
        self.interval = 0
        self.epoch = 0                  # block number * EPOCH + interval
        self.recorder = BlockRecorder()

    def garbage(self, shape, dtype):
        """A fresh array of what memory holds before anyone writes it: NaN for floats, random
        bits for integers (and booleans). One larger than any GPU gives (a block's shared memory,
        a thread's local memory) is refused before it is made: ptxas refuses such a kernel too,
        and a check compiles while it simulates."""
        dtype = np.dtype(dtype)
        if type(shape) is int:                      # (np.prod costs 4 us, a local array per
            count = shape                           # thread and per call of cuda.local.array)
        elif type(shape) is tuple and all(type(n) is int for n in shape):
            count = math.prod(shape)
        else:
            count = int(np.prod(shape, dtype=np.int64))
        wanted = count * dtype.itemsize
        if wanted > MAX_ARRAY_BYTES:
            raise MemoryError(f"an array of {wanted} bytes: more than a GPU gives one block's "
                              f"shared memory or one thread's local memory (at most "
                              f"{MAX_ARRAY_BYTES // 1024} KiB)")
        if dtype.kind in "fc":
            return np.full(shape, np.nan, dtype=dtype)
        data = np.frombuffer(self.rng.bytes(wanted), dtype=np.uint8).copy()
        if dtype.kind == "b":
            data &= 1
        return data.view(dtype).reshape(shape)

    def in_order(self, items):
        """``items`` (threads or blocks) in the schedule's order."""
        if self.order == "forward":
            return list(items)
        if self.order == "reversed":
            return list(items)[::-1]
        return [items[i] for i in self.rng.permutation(len(items))]

    # -- called by the instrumented arrays, in the running simulated thread ------------------
    def who(self):
        return f"{self.current.name_} of {self.block_run.name}"

    def fail(self, kind, message, **details):
        """Stop the run with a :class:`KernelFault` (the first one stands); ``details``: the
        fault's array, index and action; the running thread and its block are added."""
        if self.trace.fault is None:
            thread = details.pop("thread", self.current.local_id if self.current else None)
            block = self.block_run.idx if self.block_run else None
            self.trace.fault = KernelFault(kind, message, thread=thread, block=block, **details)
        raise Stop

    def out_of_bounds(self, array, action, index):
        index = [operator.index(i) for i in index]
        axes = ("row", "column") if len(index) == 2 else ("index",) * len(index)
        bad = [f"{axis} {i} {'< 0' if i < 0 else f'>= {d}'}"
               for axis, i, d in zip(axes, index, array.shape, strict=True) if not 0 <= i < d]
        where = "shared array" if isinstance(array, SharedArray) else "array"
        line = self.cell_line()
        self.fail("out of bounds", f"{self.who()} {action} {array.name}"
                  f"[{', '.join(map(str, index))}]{f' at {line}' if line else ''}, outside the "
                  f"{' x '.join(map(str, array.shape))} {where} {array.name} ({'; '.join(bad)})",
                  array=array.name, index=tuple(index), action=action)

    def unwritten_local(self, array, index):
        """The running thread read element ``index`` (a tuple) of its local ``array`` before
        writing it."""
        name = _allocation_name(*array.site, space="local")
        index = tuple(int(i) if isinstance(i, (int, np.integer)) else str(i) for i in index)
        line = self.cell_line()
        self.fail("unwritten", f"{self.who()} read {name}[{', '.join(map(str, index))}]"
                  f"{f' at {line}' if line else ''} before writing it: a thread's local array "
                  f"starts undefined on a GPU (its registers hold whatever they held before), so "
                  f"that value is garbage that changes from run to run. Write each element "
                  f"first (for example, set every accumulator to 0 before the loop).",
                  array=name, index=index, action="read")

    def cell_line(self):
        """'line 12 (`acc += ...`)': where in the kernel's cell the running thread is now (the
        innermost frame of the kernel's file: a device function of the cell counts)."""
        filename = self.fn.__code__.co_filename
        frame = sys._getframe(1)
        while frame is not None and frame.f_code.co_filename != filename:
            frame = frame.f_back
        return "" if frame is None else _site_text(((filename, frame.f_lineno),))

    def race(self, array, e, reader, writer, kind, had_value, lines=(0, 0), other="w",
             atomic=False):
        """File a race on a shared element between two threads of the running block
        (block-local ids) and the lines of their accesses; ``atomic``: one of them was an atomic,
        ``other``: which access of the element's
        record the race is with ("r" or "w", for an alias's name)."""
        if self.block_race is not None and len(self.trace.races) >= MAX_RACES:
            return
        threads = self.block_run.threads
        name, index = array.label(e)
        notes = [ATOMIC_NOTE] if atomic else []
        if isinstance(array, DynamicBytes):
            notes += [n for n in [array.alias_note(e, other)] if n]
        self._file(Race(name, index, threads[reader].name_, threads[writer].name_, kind,
                        bool(had_value), self.interval, self.block_run.name, self.cell_line(),
                        reader, writer, *self._lines(lines), note="; ".join(notes)))

    def global_race(self, array, e, reader, writer, kind, read_line, write_line, atomic=False):
        """File a race on a global element between two threads (global ids): of the running
        block in one interval, or of two blocks."""
        if self.block_race is not None and len(self.trace.races) >= MAX_RACES:
            return
        trace, per_block = self.trace, self.threads_per_block
        same = reader // per_block == writer // per_block
        block = self.block_run.linear
        local = [g - block * per_block if g // per_block == block else -1
                 for g in (reader, writer)]
        name = ((lambda g: self.block_run.threads[g - block * per_block].name_) if same
                else trace.who)
        self._file(Race(array.name, tuple(int(i) for i in np.unravel_index(e, array.shape)),
                        name(reader), name(writer), kind, False, self.interval if same else -1, self.block_run.name if same else "",
                        self.cell_line(), local[0], local[1],
                        *self._lines((read_line, write_line)), space="global",
                        note=ATOMIC_NOTE if atomic else ""))

    def _lines(self, lines):
        filename = self.fn.__code__.co_filename
        return [_site_text(((filename, _line_number(n)),)) if n else "" for n in lines]

    def _file(self, race):
        if self.trace.races and self.trace.races[-1] == race:
            return                  # the same race on the next byte of one element
        if self.block_race is None:
            self.block_race = race
        if len(self.trace.races) < MAX_RACES:
            self.trace.races.append(race)

    def uninitialized_read(self, array, e):
        if len(self.block_uninitialized) < MAX_RACES:
            self.block_uninitialized.append((array, e, self.current, self.interval,
                                             self.cell_line(), array.label(e)))

    def count_shared_read(self, name):
        """A read of shared memory through ``name``: counted per array, per thread and per
        interval with reads."""
        trace = self.trace
        trace.shared[name] = trace.shared.get(name, 0) + 1
        trace.shared_reads[self.current.gid] += 1
        if self.interval != self.last_read_interval:
            self.last_read_interval = self.interval
            idx = self.block_run.idx
            trace.read_intervals[idx] = trace.read_intervals.get(idx, 0) + 1

    def warp_gen(self):
        """How many syncwarps the running thread's warp has crossed (orders its accesses)."""
        return self.block_run.warp_gens[self.current.local_id >> 5]

    def unordered_in_block(self, other, gen):
        """Whether an access by thread ``other`` of the running block, in this barrier
        interval, at warp generation ``gen``, is unordered with the running thread's next one:
        it is ordered when both threads are of one warp and a syncwarp came between."""
        t = self.current.local_id >> 5
        return other >> 5 != t or self.block_run.warp_gens[t] == gen

    def unordered(self, gid, then, gen):
        """As :meth:`unordered_in_block` for a global access by thread ``gid`` at epoch
        ``then`` (only one of this interval can be ordered by a syncwarp)."""
        return then != self.epoch or self.unordered_in_block(
            gid - self.block_run.linear * self.threads_per_block, gen)

    def _cross(self):
        """The running block crossed a barrier: a new interval."""
        self.interval += 1
        self.epoch += 1

    # -- the scheduler ------------------------------------------------------------------------
    def run(self):
        module = _InstrumentedCuda(self, self.grid, self.block)
        wrapped = []
        try:
            with Watchdog(self.time_limit) as watchdog, \
                    gpu_arithmetic(_module_functions(self.fn), wrapped), \
                    _sim_kernel._push_kernel_context(module), \
                    swapped_cuda_module(self.fn, module), _direct_device_calls(self.fn, module), \
                    _collector_sees_only_the_run():
                for linear, idx in self.in_order(list(enumerate(_thread_order(self.grid)))):
                    self._run_block(_BlockRun(self, idx, linear))
                    if self.trace.fault is not None:
                        break
        except Stop:
            pass
        if watchdog.fired and self.trace.fault is None:
            self.trace.fault = KernelFault("timeout", (
                f"the kernel did not finish within {seconds(self.time_limit)} (it was running "
                f"{self._stuck_where()}): is there an endless loop?"),
                block=self.block_run.idx if self.block_run else None)
        if wrapped:
            self.trace.wrapped = wrapped[0].describe(self.fn.__code__.co_filename)
        fault = self.trace.fault
        self.trace.observed = self.recorder.plain(self, fault.plain() if fault else None)
        return self.trace

    def _stuck_where(self):
        """'thread (3,0) of block (1,0) at line 12 (`while ...`)': the thread the watchdog stopped
        and the kernel's line it was on."""
        thread = self.current
        if thread is None:
            return "its first thread"
        stop = thread.error if thread.state == STOPPED else None
        line = where(stop, self.fn.__code__.co_filename) if stop is not None else ""
        return self.who() + line

    def _turn(self, thread):
        """Let ``thread`` run until it reaches a barrier or ends."""
        self.current = thread
        thread.state = RUNNING
        thread.glet.switch()
        if thread.state == FAILED:
            self.fail("exception", _describe_exception(thread, self.fn))
        if thread.state == STOPPED or self.trace.fault is not None:
            raise Stop          # a fault, or (with no fault) the watchdog: the run ends

    def _run_block(self, run):
        self.block_run = run
        self.interval = 0
        self.epoch = run.linear * EPOCH
        self.last_read_interval = -1
        self.block_race, self.block_uninitialized = None, []
        self.recorder.start_block()
        pending = run.threads
        stopped = True
        try:
            while True:
                for thread in self.in_order(pending):
                    self._turn(thread)
                at_warp = [t for t in run.threads if t.state == AT_WARP]
                if at_warp:
                    pending = self._warp_step(run, at_warp)
                    continue
                pending = [t for t in run.threads if t.state == WAITING]
                if not pending:
                    break
                self._check_barrier(run, pending)
                self.recorder.barrier(_site_text(pending[0].site))
                self._cross()
            self.trace.barriers[run.idx] = self.interval
            stopped = False
        finally:
            for t in run.threads:          # after a fault: unwind the threads parked at a barrier
                if t.state in (WAITING, AT_WARP):
                    t.glet.throw(Stop)
            self._end_block(run, stopped)

    def _end_block(self, run, stopped):
        """File the block's reads of shared memory nobody had written (by then: shared arrays
        belong to one block) and tell the recorder what the block was worth showing."""
        unwritten = [(array, e, thread, interval, line, label)
                     for array, e, thread, interval, line, label in self.block_uninitialized
                     if array.first_w[e] == -1 or array.first_w[e] > interval]
        unwritten = [u for n, u in enumerate(unwritten) if n == 0 or u[5] != unwritten[n - 1][5]
                     or u[2] is not unwritten[n - 1][2]]      # one per element, not per byte
        room = MAX_RACES - len(self.trace.uninitialized)
        self.trace.uninitialized += [
            (name, index, thread.name_, run.name, line)
            for _, _, thread, _, line, (name, index) in unwritten[:max(room, 0)]]
        if stopped:
            self.recorder.end_block(run, FAULT)
        elif self.block_race is not None:
            self.recorder.end_block(run, RACE, self.block_race.plain())
        elif unwritten:
            _, _, thread, interval, _, (name, index) = unwritten[0]
            self.recorder.end_block(run, UNWRITTEN, {
                "kind": "unwritten", "array": name, "index": list(index),
                "threads": [thread.local_id, None], "interval": interval})
        else:
            self.recorder.end_block(run, PLAIN)

    def _warp_step(self, run, at_warp):
        """Complete the warp primitives that can complete (:func:`.warps.step`); the threads
        that go on, in lane order. A primitive that can never complete stops the run."""
        released, blocked = [], ""
        for warp in sorted({t.local_id >> 5 for t in at_warp}):
            threads = run.threads[warp * 32:(warp + 1) * 32]
            lanes = {t.local_id & 31: t for t in threads}
            waiting = {t.local_id & 31: t.request for t in threads if t.state == AT_WARP}
            try:
                results, synced, why = step(lanes, waiting,
                                            lambda m, lanes=lanes: _where(lanes[m]))
            except WarpError as error:
                lane = min(waiting)
                self.fail("warp", f"in warp {warp} of {run.name}: {error}",
                          thread=lanes[lane].local_id)
            blocked = blocked or (why and f"in warp {warp} of {run.name}: {why}")
            if synced:
                run.warp_gens[warp] += 1
            for lane, value in sorted(results.items()):
                lanes[lane].result = value
                lanes[lane].state = READY
                released.append(lanes[lane])
        if not released:
            self.fail("warp", f"{blocked}: the warp cannot go on", thread=None)
        return released

    def _check_barrier(self, run, waiting):
        finished = [t for t in run.threads if t.state == DONE]
        site = waiting[0].site
        line = _site_text(site)
        if finished:
            self.fail("barrier", (
                f"{_some(finished)} of {run.name} finished without reaching the syncthreads "
                f"at {line}, where {_some(waiting)} wait: every thread of a block must reach "
                f"every syncthreads (look for a barrier inside an `if`, or a `return` before it)"),
                thread=None)
        other = next((t for t in waiting if t.site != site), None)
        if other is not None:
            self.fail("barrier", (
                f"the threads of {run.name} wait at different syncthreads: "
                f"{_some([t for t in waiting if t.site == site])} at {line}, "
                f"{_some([t for t in waiting if t.site == other.site])} at "
                f"{_site_text(other.site)}: every thread must reach the same barrier (a "
                f"syncthreads in both branches of an `if` is two barriers)"), thread=None)


def _where(thread):
    """Where a thread of a stopped block is, for a warp primitive's message."""
    if thread.state == DONE:
        return "has exited"
    if thread.state == AT_WARP:
        return f"waits at {thread.request.kind} at {thread.request.site}"
    if thread.state == WAITING:
        return f"waits at the syncthreads at {_site_text(thread.site)}"
    return "is still running"


def _line_number(where):
    """A line number kept as a number, or as (code, bytecode offset) by the hot path of global
    reads (which turns it into a number only when a race quotes it)."""
    if type(where) is not tuple:
        return where
    code, offset = where
    return next((line for start, end, line in code.co_lines() if start <= offset < end), 0) or 0


def _some(threads, shown=3):
    names = [t.name_ for t in threads[:shown]]
    more = f" and {len(threads) - shown} more" if len(threads) > shown else ""
    return ", ".join(names) + more


def _site_text(site):
    filename, line = site[0]
    text = linecache.getline(filename, line).strip()
    return f"line {line}" + (f" (`{text}`)" if text else "")


def _describe_exception(thread, fn):
    """'thread (3,1) of block (0,1) raised ZeroDivisionError: ... at line 12 (`...`)'."""
    exc = thread.error
    return (f"{thread.name_} of {thread.block_run.name} raised {type(exc).__name__}: "
            f"{exc}{where(exc, fn.__code__.co_filename)}")


def _schedule(schedule):
    """(order, seed) of a schedule given as None (forward), an order's name, or [order, seed]."""
    if schedule is None:
        return "forward", 0
    order, seed = (schedule, 0) if isinstance(schedule, str) else schedule
    if order not in SCHEDULES:
        raise ValueError(f"schedule {order!r}: expected one of {', '.join(SCHEDULES)}")
    return order, int(seed)


def _shared_bytes(nbytes):
    """The launch's dynamic shared memory in bytes, checked."""
    if isinstance(nbytes, bool) or not isinstance(nbytes, (int, np.integer)) or nbytes < 0:
        raise ValueError(f"dynamic shared memory of {nbytes!r} bytes: expected a whole number "
                         f"of bytes, 0 or more")
    if nbytes > MAX_ARRAY_BYTES:
        raise ValueError(f"dynamic shared memory of {nbytes} bytes: more than a GPU gives one "
                         f"block (at most {MAX_ARRAY_BYTES // 1024} KiB here)")
    return int(nbytes)


def simulate(kernel, grid, block, args, time_limit=DEFAULT_TIME_LIMIT, observer=None,
             schedule=None, shared_bytes=0):
    """Launch ``kernel[grid, block]`` on the instrumented simulator and return its :class:`Trace`.

    ``args`` is a sequence of (name, value) pairs: NumPy arrays become instrumented global arrays
    (the same name twice passes one array twice), other values pass through. The arrays are
    modified in place, as a launch modifies device memory. ``observer`` (optional) sees every
    shared read and builds the local arrays (see :mod:`gemmlab.labs.registers`). ``schedule``:
    the order in which a block's threads take their turns in each interval and the blocks run
    ("forward", "reversed", or ["shuffled", seed]; the seed also draws the garbage of fresh
    memory). ``shared_bytes``: the launch's dynamic shared memory (the fourth item of
    ``kernel[grid, block, stream, nbytes]``), which every ``cuda.shared.array(0, dtype)`` of a
    block shares. A fault in the kernel ends up in ``trace.fault``; this function raises only
    for a bad launch.
    """
    if device.backend() != "sim":
        raise RuntimeError("the instrumented simulator needs the simulator backend "
                           "(GEMMLAB_BACKEND=sim); on a GPU the labs run it in a subprocess")
    if not hasattr(kernel, "py_func") or getattr(kernel, "_device", False):
        raise TypeError(f"expected a @cuda.jit kernel, got {type(kernel).__name__}")
    return Launch(kernel, grid, block, args, time_limit, observer, schedule,
                  shared_bytes).run()
