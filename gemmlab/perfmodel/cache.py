"""A fully associative LRU cache simulator, and the address traces of three GEMM loop orders.

The cache holds ``n_lines`` lines of ``line_size`` bytes. An access that finds its line is a hit;
otherwise the line is brought in from the level below (``line_size`` bytes moved), evicting the
least recently used line when the cache is full. Writes are treated like reads (write-allocate)
and write-backs are not counted: ``bytes_moved`` is the traffic *into* the cache.
"""
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from ..numeric_args import whole_number

LOOP_ORDERS = ("ijk", "ikj", "tiled")


@dataclass(frozen=True)
class Step:
    """One access of a trace: address, its line, hit or miss, the evicted line, resident lines."""
    address: int
    line: int
    hit: bool
    evicted: object          # line number, or None
    resident: tuple          # lines in the cache afterwards, least recently used first


@dataclass(frozen=True)
class CacheResult:
    hits: int
    misses: int
    bytes_moved: int
    steps: tuple             # one Step per line touched (empty unless record=True)

    @property
    def accesses(self):
        return self.hits + self.misses

    @property
    def hit_rate(self):
        return self.hits / self.accesses if self.accesses else 0.0


class LRUCache:
    """The cache itself; :func:`simulate` runs a whole trace through a fresh one."""

    def __init__(self, line_size, n_lines):
        self.line_size = whole_number("line_size", line_size)
        self.n_lines = whole_number("n_lines", n_lines)
        self._lines = OrderedDict()
        self.hits = self.misses = 0

    @property
    def bytes_moved(self):
        return self.misses * self.line_size

    def access(self, address, size=1):
        """Touch bytes [address, address + size); return one :class:`Step` per line touched."""
        address, size = whole_number("an address", address, least=0), whole_number("size", size)
        first, last = address // self.line_size, (address + size - 1) // self.line_size
        return [self._touch(address, line) for line in range(first, last + 1)]

    def _touch(self, address, line):
        evicted = None
        if line in self._lines:
            self._lines.move_to_end(line)
            self.hits += 1
            hit = True
        else:
            if len(self._lines) == self.n_lines:
                evicted, _ = self._lines.popitem(last=False)
            self._lines[line] = None
            self.misses += 1
            hit = False
        return Step(address, line, hit, evicted, tuple(self._lines))


def simulate(trace, line_size, n_lines, access_size=1, record=True):
    """Run the byte addresses of ``trace`` through an empty LRU cache; return a :class:`CacheResult`.
    ``record=False`` skips the per-step record, for long traces."""
    cache = LRUCache(line_size, n_lines)
    steps = []
    for address in np.asarray(trace).ravel().tolist():
        taken = cache.access(address, access_size)
        if record:
            steps.extend(taken)
    return CacheResult(cache.hits, cache.misses, cache.bytes_moved, tuple(steps))


def gemm_trace(M, N, K, order="ijk", tile=None, itemsize=4):
    """Byte addresses a single-thread C = AB touches, in program order, for one loop order.

    A, B and C are row-major and stored one after another (A at 0, then B, then C).
    ``"ijk"``: per output, A[i,k] and B[k,j] for each k, then one write of C[i,j].
    ``"ikj"``: per (i, k), A[i,k] once, then B[k,j] and C[i,j] (one read-modify-write) for each j.
    ``"tiled"``: ``"ikj"`` inside T x T tiles, tiles ordered (i, k, j).
    """
    M, N, K = whole_number("M", M), whole_number("N", N), whole_number("K", K)
    s = whole_number("itemsize", itemsize)
    if order not in LOOP_ORDERS:
        raise ValueError(f"unknown loop order {order!r}; expected one of {', '.join(LOOP_ORDERS)}")
    if (order == "tiled") != (tile is not None):
        raise ValueError("give a tile size exactly when order='tiled', "
                         "e.g. gemm_trace(8, 8, 8, 'tiled', tile=4)")
    a = lambda i, k: (i * K + k) * s
    b = lambda k, j: (M * K + k * N + j) * s
    c = lambda i, j: (M * K + K * N + i * N + j) * s
    trace = []
    if order == "ijk":
        for i in range(M):
            for j in range(N):
                for k in range(K):
                    trace += (a(i, k), b(k, j))
                trace.append(c(i, j))
        return np.array(trace, dtype=np.int64)
    T = whole_number("tile", tile) if order == "tiled" else max(M, N, K)
    for i0 in range(0, M, T):
        for k0 in range(0, K, T):
            for j0 in range(0, N, T):
                for i in range(i0, min(i0 + T, M)):
                    for k in range(k0, min(k0 + T, K)):
                        trace.append(a(i, k))
                        for j in range(j0, min(j0 + T, N)):
                            trace += (b(k, j), c(i, j))
    return np.array(trace, dtype=np.int64)
