"""Whether the next K tile's loads overlap this tile's multiply-adds (labs 08 and 11).

Ping-pong buffering is worth its second buffer only if, in each K step, a thread *issues* the
global loads of tile t+1 (into registers) before the multiply-adds of tile t, and *stores* them
into the other shared buffer after those multiply-adds: the loads' latency then hides under the
arithmetic. A kernel that loads tile t+1 after computing tile t, or that stores it into shared
memory before computing (the store has to wait for the load), has two buffers and no overlap.

The simulator cannot see an FMA, but it sees the values: every input is distinct
(:mod:`gemmlab.labs.cases`), so a shared read names the depth k of the element it reads (the
multiply-adds of tile t read tile t's values), and a global read or a shared store names the depth
of the element it moves. :class:`TileOrderObserver` keeps, per thread and barrier interval, the
clock of its first and last shared read, the deepest k it read from shared memory, and the
clocks of its global reads and shared stores of deeper elements (the next tile). :func:`missing`
turns that record into the first thread-step without the overlap.
"""
import numpy as np

from .registers import FragmentObserver, depths


class TileOrderObserver:
    """Events in one launch of a GEMM kernel, for :func:`missing`."""
    name = "tile_order"

    def __init__(self, A, B, depth=None):
        self.depth = depth if depth is not None else depths(A, B)
        self.clock = 0
        self.first = {}           # (gid, interval) -> clock of its first shared read
        self.last = {}            # ... of its last one
        self.deepest = {}         # ... the deepest k it read from shared memory
        self.loads = {}           # (gid, interval) -> [(clock, k)] of global reads
        self.stores = {}          # (gid, interval) -> [(clock, k)] of shared writes
        # (numbers in dicts rather than a list per key: a run has thousands of keys, and lists
        # are objects the cycle collector walks, numbers are not)

    def _tick(self):
        self.clock += 1
        return self.clock

    def global_read(self, thread, array, index):
        if array in ("A", "B") and len(index) == 2:
            k = index[1] if array == "A" else index[0]
            key = (thread.gid, thread.launch.interval)
            self.loads.setdefault(key, []).append((self._tick(), int(k)))

    def shared_read(self, thread, value, interval):
        k = self.depth.get(float(value))
        if k is None:
            return
        self.clock = now = self.clock + 1
        key = (thread.gid, interval)
        if key in self.last:
            self.last[key] = now
            if k > self.deepest[key]:
                self.deepest[key] = k
        else:
            self.first[key] = self.last[key] = now
            self.deepest[key] = k

    def shared_write(self, thread, value, interval):
        k = self.depth.get(float(value))
        if k is not None:
            self.stores.setdefault((thread.gid, interval), []).append((self._tick(), k))

    def as_data(self):
        """Per (gid, interval) with shared reads and loads of deeper elements: gid, interval,
        first and last shared-read clock, first and last such load, first such store (-1 if
        none)."""
        rows = []
        for key, first in self.first.items():
            last, deepest = self.last[key], self.deepest[key]
            loads = [c for c, k in self.loads.get(key, ()) if k > deepest]
            if not loads:
                continue
            stores = [c for c, k in self.stores.get(key, ()) if k > deepest]
            rows.append((*key, first, last, min(loads), max(loads), min(stores, default=-1)))
        return {"steps": np.array(rows, dtype=np.int64).reshape(-1, 7)}


def missing(record):
    """('load' or 'store', gid, interval) of the first thread-step without the overlap, or
    None; ``record`` is a :class:`TileOrderObserver`'s :meth:`~TileOrderObserver.as_data`."""
    for gid, interval, first, last, _load0, load1, store0 in np.asarray(record["steps"]):
        if load1 > first:
            return "load", int(gid), int(interval)
        if 0 <= store0 < last:
            return "store", int(gid), int(interval)
    return None


def steps(record):
    return len(np.asarray(record["steps"]))


class Observers:
    """Several observers as the simulator's one ``observer``: each event goes to those that
    take it; only the fragment observer builds local arrays."""

    EVENTS = ("global_read", "shared_read", "shared_write")

    def __init__(self, observers):
        self.observers = list(observers)
        for event in self.EVENTS:       # bound once: the simulator sends an event per access
            setattr(self, event, _fan_out([getattr(observer, event) for observer in
                                           self.observers if hasattr(observer, event)]))

    def local_array(self, launch, data):
        for observer in self.observers:
            if isinstance(observer, FragmentObserver):
                return observer.local_array(launch, data)
        return data

    def as_data(self):
        return {observer.name: observer.as_data() for observer in self.observers}


def _fan_out(handlers):
    """One callable that calls each of ``handlers`` with its arguments."""
    if len(handlers) == 1:
        return handlers[0]

    def each(*args):
        for handler in handlers:
            handler(*args)
    return each


BUILDERS = {"fragments": FragmentObserver, "tile_order": TileOrderObserver}


def build(names, A, B):
    """The observers ``names`` (keys of :data:`BUILDERS`) of a run on inputs A and B, or None."""
    if not names:
        return None
    depth = depths(A, B)
    return Observers(BUILDERS[name](A, B, depth) for name in names)
