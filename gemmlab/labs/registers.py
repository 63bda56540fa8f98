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
    A, B = np.asarray(A), np.asarray(B)
    k_of_a = np.broadcast_to(np.arange(A.shape[1]), A.shape)      # A[i, k] is of depth k
    k_of_b = np.broadcast_to(np.arange(B.shape[0])[:, None], B.shape)
    depth = dict(zip(A.astype(np.float64).ravel().tolist(), k_of_a.ravel().tolist(), strict=True))
    depth.update(zip(B.astype(np.float64).ravel().tolist(), k_of_b.ravel().tolist(), strict=True))
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
        first = np.hstack([_rows(self.first_read.keys(), 2), _rows(self.first_read.values(), 2)])
        last = np.hstack([_rows(self.last_use.keys(), 2), _rows(self.last_use.values(), 1)])
        return {"first_read": first, "last_use": last, "uses": self.uses}


def _rows(items, width):
    return np.array(list(items), dtype=np.int64).reshape(-1, width)


def prefetch_steps(record):
    """(prefetched, steps) of a :class:`FragmentObserver` record: of the (thread, k) steps with a
    next step k+1 in the same K tile, how many read k+1 from shared memory before their last use
    of k. (In arrays, step by step at once: a record has a row per thread and k.)"""
    first = np.asarray(record["first_read"], dtype=np.int64).reshape(-1, 4)
    last = np.asarray(record["last_use"], dtype=np.int64).reshape(-1, 3)
    if not len(first) or not len(last):
        return 0, 0
    span = int(max(first[:, 1].max(), last[:, 1].max(), 0)) + 2     # (gid, k) -> one number
    gid, k, clock, interval = first.T
    key = gid * span + k
    following, has_following = _find(key, key + 1)
    used, has_use = _find(last[:, 0] * span + last[:, 1], key)
    step = has_following & has_use
    step[step] = interval[step] == interval[following[step]]
    prefetched = clock[following[step]] < last[used[step], 2]
    return int(prefetched.sum()), int(step.sum())


def _find(keys, wanted):
    """(row of ``keys`` equal to each of ``wanted``, whether there is one); ``keys`` distinct."""
    order = np.argsort(keys, kind="stable")
    at = np.minimum(np.searchsorted(keys[order], wanted), len(keys) - 1)
    return order[at], keys[order[at]] == wanted


class _WatchedLocal:
    """A local array whose reads are reported to the observer (:meth:`FragmentObserver.local_read`,
    written out here: a lab's kernel reads its registers millions of times on the simulator)."""
    __slots__ = ("observer", "launch", "data", "shape", "depth_of", "first_read", "last_use")

    def __init__(self, observer, launch, data):
        self.observer, self.launch, self.data, self.shape = observer, launch, data, data.shape
        self.depth_of, self.first_read = observer.depth.get, observer.first_read
        self.last_use = observer.last_use

    def __len__(self):
        return len(self.data)

    def __getitem__(self, index):
        value = self.data[index]
        if type(value) is not np.ndarray:       # one register (an array is a slice of them)
            k = self.depth_of(float(value))
            if k is not None:
                key = (self.launch.current.gid, k)
                if key in self.first_read:
                    observer = self.observer
                    observer.clock = clock = observer.clock + 1
                    observer.uses += 1
                    self.last_use[key] = clock
        return value

    def __setitem__(self, index, value):
        self.data[index] = value
