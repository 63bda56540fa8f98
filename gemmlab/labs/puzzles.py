"""The warm-up puzzles of lesson 03: eight small kernels before the GEMM labs.

Each puzzle is an ordinary kernel lab (:class:`gemmlab.labs.kernel_lab.KernelLab`): the student
writes a ``@cuda.jit`` kernel, the puzzle fixes its launch (1-D, 2-D or one block, see
:mod:`gemmlab.labs.puzzle_cases`), and the check runs it on the instrumented simulator at sizes
that are not multiples of the block, with fresh random inputs and a poisoned output, compares
with a float64 reference and names the first mistake (:mod:`gemmlab.labs.puzzle_feedback`).
Float32 arrays, C-contiguous.

=========================  =====================  =============================================
``03.puzzle_map``          ``kernel(a, out)``      out[i] = a[i] + 10 (1-D)
``03.puzzle_zip``          ``kernel(a, b, out)``   out[i] = a[i] + b[i] (1-D)
``03.puzzle_map2d``        ``kernel(a, out)``      out[i, j] = a[i, j] + 10 (2-D)
``03.puzzle_broadcast``    ``kernel(a, b, out)``   out[i, j] = a[i] + b[j] (2-D)
``03.puzzle_shared``       ``kernel(a, out)``      out[32b + t] = s[t] + s[(t+1) % 32], s the
                                                   block's 32 elements of a in shared memory (0
                                                   past the end), each read from a once (1-D)
``03.puzzle_pool``         ``kernel(a, out)``      out[i] = a[i-2] + a[i-1] + a[i] (0 before the
                                                   start), at most n + 2 x blocks reads (1-D)
``03.puzzle_dot``          ``kernel(a, b, out)``   out[0] = sum a[i] b[i], reduced in shared
                                                   memory (one block)
``03.puzzle_prefix``       ``kernel(a, out)``      out[i] = a[0] + ... + a[i], in shared memory
                                                   (one block)
=========================  =====================  =============================================
"""
import math
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from .. import precision
from .cases import POISON_HIGH, POISON_LOW
from .kernel_lab import KernelLab
from .puzzle_cases import BLOCK, GRID, LINE, ONE_BLOCK, SIDE, WARP, PuzzleCase, values
from .puzzle_feedback import first_problem, summary

def roundings(terms, count=1):
    """Elementwise bound for ``count`` float32 roundings of sums of ``terms`` (the largest
    magnitude any partial sum reaches), with slack 2."""
    return 2 * count * precision.unit_roundoff("fp32") * terms + 1e-30


# -- the references and their float32 bounds ---------------------------------------------------
def map_ref(a):
    return a.astype(np.float64) + 10, roundings(np.abs(a.astype(np.float64)) + 10)


def zip_ref(a, b):
    a, b = a.astype(np.float64), b.astype(np.float64)
    return a + b, roundings(np.abs(a) + np.abs(b))


def broadcast_ref(a, b):
    a, b = a.astype(np.float64)[:, None], b.astype(np.float64)[None, :]
    return a + b, roundings(np.abs(a) + np.abs(b))


def shared_slots(a):
    """s of every block, side by side: a padded with zeros to a whole number of blocks."""
    s = np.zeros(math.ceil(a.size / WARP) * WARP)
    s[:a.size] = a
    return s.reshape(-1, WARP)


def shared_ref(a):
    s = shared_slots(a.astype(np.float64))
    out = (s + np.roll(s, -1, axis=1)).reshape(-1)[:a.size]
    terms = (np.abs(s) + np.abs(np.roll(s, -1, axis=1))).reshape(-1)[:a.size]
    return out, roundings(terms)


def pool_ref(a):
    a = np.concatenate([np.zeros(2), a.astype(np.float64)])
    out = a[2:] + a[1:-1] + a[:-2]
    return out, roundings(np.abs(a[2:]) + np.abs(a[1:-1]) + np.abs(a[:-2]), 2)


def dot_ref(a, b):
    """The dot product, within lesson 01's bound for float32 summation in any order: n products,
    each rounded once (u |a b|), and the sequential bound (n - 1) u sum |a b| (the largest of the
    orders: a tree of depth log2 n stays inside it)."""
    products = a.astype(np.float64) * b.astype(np.float64)
    u = precision.unit_roundoff("fp32")
    bound = precision.error_bound(products, "fp32") + u * np.abs(products).sum()
    return np.array([math.fsum(products)]), np.array([2 * bound + 1e-30])


def prefix_ref(a):
    """Each prefix within the same bound as the dot product's, for its own terms."""
    a = a.astype(np.float64)
    bounds = [precision.error_bound(a[:i + 1], "fp32") for i in range(a.size)]
    return np.cumsum(a), 2 * np.array(bounds) + 2 * precision.unit_roundoff("fp32") * \
        np.cumsum(np.abs(a)) + 1e-30


# -- known wrong results: (name, function of the inputs, what the kernel did) ------------------
def _swapped_broadcast(a, b):
    if a.size != b.size:
        return None
    return b.astype(np.float64)[:, None] + a.astype(np.float64)[None, :]


def _transposed(a):
    return a.astype(np.float64).T + 10 if a.shape[0] == a.shape[1] else None


def _exclusive(a):
    return np.concatenate([[0.0], np.cumsum(a.astype(np.float64))[:-1]])


@dataclass(frozen=True)
class Puzzle(KernelLab):
    """A warm-up puzzle: a kernel lab on small 1-D or 2-D arrays (see the module docstring).

    ``reference(*inputs)`` gives the float64 result and its float32 bound; ``sizes`` the public
    cases; ``known_wrong`` results that name a mistake; ``max_reads`` (of the first input, as a
    function of the case) the global-read budget; ``reduction`` marks the one-block puzzles that
    must work in shared memory with a short chain per thread (``scan``: the prefix sum, whose
    in-place race is named)."""
    parameters: tuple = ("a", "out")
    layout: str = LINE
    sizes: tuple = ()
    seed: int = 0
    reference: Callable = None
    known_wrong: tuple = ()
    max_reads: Optional[Callable] = None
    reads_rule: str = ""
    reduction: bool = False
    scan: bool = False
    time_limit: float = 30.0

    @property
    def inputs(self):
        return self.parameters[:-1]

    @property
    def output(self):
        return self.parameters[-1]

    not_attempted = ("your kernel does not read its inputs nor write out yet: write its body "
                     "and run the cell again.")

    # -- the cases ----------------------------------------------------------------------------
    def cases(self, rng=None):
        if rng is None:
            rng, sizes = np.random.default_rng(self.seed), self.sizes
        else:
            sizes = self.hidden_sizes(rng)
        return [self.make_case(size, rng) for size in sizes]

    def hidden_sizes(self, rng):
        """Sizes for the grader: never a whole number of blocks; for the 2-D puzzles one square
        case (where a transposed result shows) and two with rows != cols."""
        if self.layout == LINE:
            return [(_not_multiple(rng, WARP + 1, 5 * WARP, WARP),) for _ in range(3)]
        if self.layout == GRID:
            side = _not_multiple(rng, SIDE + 1, 3 * SIDE, SIDE)
            shapes = [(side, side)]
            while len(shapes) < 3:
                rows, cols = (_not_multiple(rng, 2, 3 * SIDE, SIDE) for _ in range(2))
                if rows != cols:
                    shapes.append((rows, cols))
            return shapes
        return [(BLOCK,), (int(rng.integers(100, BLOCK)),), (int(rng.integers(100, BLOCK)),)]

    def make_case(self, size, rng):
        shapes = self.input_shapes(size)
        inputs = {name: values(rng, shape) for name, shape in zip(self.inputs, shapes, strict=True)}
        expected, tolerance = self.reference(*inputs.values())
        output = rng.uniform(POISON_LOW, POISON_HIGH, expected.shape).astype(np.float32)
        return PuzzleCase(self.layout, tuple(size), inputs, output, expected, tolerance)

    def input_shapes(self, size):
        if self.layout == GRID and len(self.inputs) == 2:       # broadcast: a per row, b per column
            return [(size[0],), (size[1],)]
        return [tuple(size)] * len(self.inputs)

    # -- the kernel-lab hooks -----------------------------------------------------------------
    def launch_of(self, case):
        return case.launch()

    def arrays(self, case):
        arrays = {name: value.copy() for name, value in case.inputs.items()}
        arrays[self.output] = case.output.copy()
        return arrays

    def untouched(self, trace):
        arrays = trace.arrays
        return (trace.fault is None and not arrays[self.output].thread_writes
                and not any(arrays[name].thread_reads for name in self.inputs))

    def first_problem(self, case, arrays, trace):
        return first_problem(self, case, arrays[self.output], trace)

    def summary(self, runs):
        return summary(self, runs)


def _not_multiple(rng, low, high, of):
    while True:
        n = int(rng.integers(low, high))
        if n % of:
            return n


def _pool_reads(case):
    return case.n + 2 * math.ceil(case.n / WARP)


MAP = Puzzle("puzzle_map", sizes=((70,), (45,)), seed=31, reference=map_ref)
ZIP = Puzzle("puzzle_zip", parameters=("a", "b", "out"), sizes=((70,), (45,)), seed=32,
             reference=zip_ref)
MAP2D = Puzzle("puzzle_map2d", layout=GRID, sizes=((17, 17), (19, 35), (37, 21)), seed=33,
               reference=map_ref,
               known_wrong=(("a transposed store", _transposed,
                             "out[j, i] was written where out[i, j] belongs"),))
BROADCAST = Puzzle("puzzle_broadcast", parameters=("a", "b", "out"), layout=GRID,
                   sizes=((17, 17), (19, 35), (37, 21)), seed=34, reference=broadcast_ref,
                   known_wrong=(("the wrong axis broadcast", _swapped_broadcast,
                                 "out[i, j] = a[j] + b[i]: a holds one value per ROW (index i), "
                                 "b one per COLUMN (index j)"),))
SHARED = Puzzle("puzzle_shared", sizes=((70,), (45,)), seed=35, reference=shared_ref,
                max_reads=lambda case: case.n,
                reads_rule="each element of a once: the neighbour's value comes from shared "
                           "memory, where its own thread put it")
POOL = Puzzle("puzzle_pool", sizes=((70,), (45,)), seed=36, reference=pool_ref,
              max_reads=_pool_reads,
              reads_rule="n + 2 x (number of blocks): each block loads its 32 elements once, plus "
                         "the 2 before them (the halo), into shared memory, and the threads read "
                         "their three terms there")
DOT = Puzzle("puzzle_dot", parameters=("a", "b", "out"), layout=ONE_BLOCK,
             sizes=((200,), (77,)), seed=37, reference=dot_ref, max_reads=lambda case: case.n,
             reads_rule="each element of a and b once", reduction=True)
PREFIX = Puzzle("puzzle_prefix", layout=ONE_BLOCK, sizes=((200,), (77,)), seed=38,
                reference=prefix_ref, max_reads=lambda case: case.n,
                reads_rule="each element of a once", reduction=True, scan=True,
                known_wrong=(("an exclusive scan", _exclusive,
                              "out[i] = a[0] + ... + a[i-1], without a[i] itself: this puzzle's "
                              "scan is inclusive"),))
PUZZLES = {p.name: p for p in (MAP, ZIP, MAP2D, BROADCAST, SHARED, POOL, DOT, PREFIX)}
