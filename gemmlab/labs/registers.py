"""What the register level of a kernel does, seen from the simulator (lab 11).

Register double buffering means: a thread reads the fragments of step k+1 from shared memory
*before* the multiply-adds of step k have used the fragments of step k, so the shared-memory
latency of the next step hides under the current step's FMAs. The simulator cannot see an FMA,
but it can see the values: every input of the lab is distinct (:mod:`gemmlab.labs.cases`), so a
value read from shared memory or from a local array (``cuda.local.array``, the kernel's
registers) names the element of A or B it is, and so its depth k. The observer records, per
thread and per k:

- when the thread first read a value of depth k from shared memory, and in which barrier
  interval (a K tile);
- when it last read a value of depth k from a local array after that: the last use of a
  fragment of step k by the multiply-adds (values staged in registers on their way from global
  to shared memory are read before any shared read of their depth, and do not count).

A step k is *prefetched* when the first shared read of depth k+1 comes before the last use of
depth k, both in the same K tile. Fragments held in scalar variables instead of local arrays
are invisible to this check; the lab asks for local arrays.
"""
import numpy as np


def depths(A, B):
    """{value: k} for every element of the distinct inputs A (M x K) and B (K x N)."""
    depth = {float(v): k for (_, k), v in np.ndenumerate(A)}
    depth.update({float(v): k for (k, _), v in np.ndenumerate(B)})
    return depth


class FragmentObserver:
    """One of the observers :class:`gemmlab.labs.overlap.Observers` passes to
    :func:`gemmlab.labs.simulator.simulate`; its record is :meth:`as_data`."""
    name = "fragments"

    def __init__(self, A, B, depth=None):
        self.depth = depth if depth is not None else depths(A, B)
        self.clock = 0
        self.first_read = {}      # (thread gid, k) -> (clock, interval)
        self.last_use = {}        # (thread gid, k) -> clock
        self.uses = 0

    def shared_read(self, thread, value, interval):
        k = self.depth.get(float(value))
        if k is not None:
            self.clock += 1
            self.first_read.setdefault((thread.gid, k), (self.clock, interval))

    def local_read(self, launch, value):
        """A fragment use: a value this thread has already read from shared memory (values on
        their way from global to shared memory, staged in registers, are not fragments)."""
        if isinstance(value, np.ndarray):       # a slice, not one register
            return
        k = self.depth.get(float(value))
        key = (launch.current.gid, k)
        if k is not None and key in self.first_read:
            self.clock += 1
            self.uses += 1
            self.last_use[key] = self.clock

    def local_array(self, launch, data):
        return _WatchedLocal(self, launch, data)

    def as_data(self):
        """The record, as plain data: first shared reads (gid, k, clock, interval), last uses
        (gid, k, clock) and the number of fragment uses."""
        first = [(g, k, c, i) for (g, k), (c, i) in self.first_read.items()]
        last = [(g, k, c) for (g, k), c in self.last_use.items()]
        return {"first_read": np.array(first, dtype=np.int64).reshape(-1, 4),
                "last_use": np.array(last, dtype=np.int64).reshape(-1, 3), "uses": self.uses}


def prefetch_steps(record):
    """(prefetched, steps) of a :class:`FragmentObserver` record: of the (thread, k) steps with a
    next step k+1 in the same K tile, how many read k+1 from shared memory before their last use
    of k."""
    first_read = {(int(g), int(k)): (int(c), int(i)) for g, k, c, i in record["first_read"]}
    last_use = {(int(g), int(k)): int(c) for g, k, c in record["last_use"]}
    prefetched = steps = 0
    for (gid, k), (_, interval) in first_read.items():
        following = first_read.get((gid, k + 1))
        if following is None or following[1] != interval or (gid, k) not in last_use:
            continue
        steps += 1
        prefetched += following[0] < last_use[(gid, k)]
    return prefetched, steps


class _WatchedLocal:
    """A local array whose reads are reported to the observer."""
    __slots__ = ("observer", "launch", "data", "shape")

    def __init__(self, observer, launch, data):
        self.observer, self.launch, self.data, self.shape = observer, launch, data, data.shape

    def __len__(self):
        return len(self.data)

    def __getitem__(self, index):
        value = self.data[index]
        self.observer.local_read(self.launch, value)
        return value

    def __setitem__(self, index, value):
        self.data[index] = value
