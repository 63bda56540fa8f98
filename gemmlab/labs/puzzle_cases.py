"""The cases of the warm-up puzzles (:mod:`gemmlab.labs.puzzles`): their three launches, and one
run's sizes, inputs, poisoned output and float64 reference.

- **1-D**: blocks of 32 threads, grid ceil(n/32); thread t of block b handles i = 32 b + t;
- **2-D**: blocks of (16, 16) threads, threadIdx.x along columns and threadIdx.y along rows, grid
  (ceil(cols/16), ceil(rows/16)): thread (x, y) of block (bx, by) handles out[16 by + y, 16 bx + x];
- **one block**: a single block of 256 threads, n <= 256.
"""
import math
from dataclasses import dataclass

import numpy as np

LINE, GRID, ONE_BLOCK = "1-D", "2-D", "one block"
WARP = 32                   # threads per block of the 1-D launch (and slots of puzzle_shared)
SIDE = 16                   # the 2-D launch's block side
BLOCK = 256                 # the one-block puzzles' threads, and their largest n


@dataclass
class PuzzleCase:
    """One run of a puzzle: its size, inputs, the poisoned output and the float64 reference."""
    layout: str
    size: tuple                         # (n,) or (rows, cols)
    inputs: dict                        # parameter name -> float32 array
    output: np.ndarray                  # the poisoned output before the run
    expected: np.ndarray                # float64
    tolerance: np.ndarray               # elementwise bound on |out - expected|

    @property
    def label(self):
        if len(self.size) == 2:
            return f"rows x cols = {self.size[0]} x {self.size[1]}"
        return f"n = {self.size[0]}"

    @property
    def n(self):
        return self.size[0]

    def launch(self):
        """(grid, block) of the puzzle's launch for this case."""
        if self.layout == LINE:
            return math.ceil(self.n / WARP), WARP
        if self.layout == GRID:
            rows, cols = self.size
            return (math.ceil(cols / SIDE), math.ceil(rows / SIDE)), (SIDE, SIDE)
        return 1, BLOCK

    def own_index(self, block, thread):
        """The output element the thread (block-local index tuple) handles in this layout."""
        if self.layout == LINE:
            return (block[0] * WARP + thread[0],)
        if self.layout == GRID:
            return (block[1] * SIDE + thread[1], block[0] * SIDE + thread[0])
        return (thread[0],)

    def owner(self, index):
        """(block, thread) index tuples of the thread that handles output element ``index``."""
        if self.layout == LINE:
            return (index[0] // WARP, 0, 0), (index[0] % WARP, 0, 0)
        if self.layout == GRID:
            i, j = index
            return (j // SIDE, i // SIDE, 0), (j % SIDE, i % SIDE, 0)
        return (0, 0, 0), (index[0], 0, 0)


def values(rng, shape):
    """float32, uniform in [-1, 1], no zero (a zero would hide a missing term)."""
    while True:
        v = rng.uniform(-1.0, 1.0, shape).astype(np.float32)
        if v.all():
            return v
