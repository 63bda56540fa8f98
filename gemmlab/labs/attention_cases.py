"""The cases of lesson 16's kernels (:mod:`gemmlab.labs.attention_lab`): the launches, the inputs
with one *hot* row, the poisoned output, the float64 reference and the results of the classic
mistakes, all computed here, in the judging process.

- **rows** (puzzle_online_softmax): x is R x n, blocks of 32 threads, grid ceil(R/32); thread t
  of block b owns row 32 b + t;
- **one block** (puzzle_merge): x has n <= 256 elements, one block of 256 threads;
- **flash** (lab_flash): Q, K, V and O are N x d, blocks of BR = 8 threads, grid ceil(N/8);
  thread t of block b owns query row 8 b + t, and K/V tiles have BC = 8 rows.

The hot row's largest score is 1000: exp(1000) overflows every float format (float32 past 88.7,
float64 past 709.8), so a kernel that forgets to subtract the max cannot pass, on the simulator
(where Python's math.exp raises OverflowError) nor on a GPU (where it gives inf, then NaN).
"""
import math
from dataclasses import dataclass, field

import numpy as np

from ..attention import attention_reference, softmax_reference, tiled_attention
from .cases import POISON_HIGH, POISON_LOW

ROW_THREADS = 32        # the rows puzzle's threads per block
MERGE_THREADS = 256     # the merge puzzle's one block, and its largest n
BR = BC = 8             # the lab's query rows per block and K/V rows per tile
D_MAX = 64              # the lab's largest head width (the accumulator's local array)
HOT = 1000.0            # the hot row's largest score
TOLERANCE = 1e-4        # |out - expected| allowed (outputs are O(1); float32 errors are ~1e-6)
UNIT = 2.0 ** -24       # float32's unit roundoff


@dataclass
class RowCase:
    """One run of a lesson-16 kernel: its launch, inputs, poisoned output, reference, and what
    the classic mistakes would have given."""
    label: str
    grid: tuple
    block: tuple
    inputs: dict                        # parameter name -> float32 array (or an int32 flag)
    output: np.ndarray                  # the poisoned output before the run
    expected: np.ndarray                # float64
    hot_row: int                        # the row (query) whose largest score is HOT
    rows_per_block: int                 # 0: one block, thread 0 writes
    budgets: dict = field(default_factory=dict)     # input -> global reads allowed in all
    known_wrong: tuple = ()             # (name, result, meaning)
    causal: bool = False
    slack: object = 0.0                 # allowed beyond the lab's tolerance (per row: rounding)

    def row_of(self, block, thread):
        """The output row of a thread (block and block-local thread id), or None."""
        if not self.rows_per_block:
            return None
        return int(block[0]) * self.rows_per_block + int(thread)


def values(rng, shape):
    """float32 uniform in [-1, 1] with no zero (a zero hides a missing term)."""
    while True:
        v = rng.uniform(-1.0, 1.0, shape).astype(np.float32)
        if v.all():
            return v


def _poison(rng, shape):
    return rng.uniform(POISON_LOW, POISON_HIGH, shape).astype(np.float32)


def _unrescaled_rows(x):
    """Each row's l summed as exp(x_j - m_j), m_j the max up to j, never rescaled."""
    x = x.astype(np.float64)
    running = np.maximum.accumulate(x, axis=1)
    l = np.exp(x - running).sum(axis=1, keepdims=True)
    return np.exp(x - x.max(axis=1, keepdims=True)) / l


def rows_case(rng, rows, n):
    """A case of puzzle_online_softmax: R x n scores, the last row hot."""
    x = values(rng, (rows, n)) * np.float32(4)
    x[-1] = x[-1] * np.float32(HOT / float(x[-1].max()))
    return RowCase(f"R x n = {rows} x {n}", (math.ceil(rows / ROW_THREADS),), (ROW_THREADS,),
                   {"x": x}, _poison(rng, (rows, n)), softmax_reference(x), rows - 1, ROW_THREADS,
                   budgets={"x": 2 * x.size},
                   known_wrong=(("the running sum not rescaled", _unrescaled_rows(x),
                                 "when a larger score arrives, the sum so far was taken against "
                                 "the old max: multiply l by exp(m_old - m_new) before adding "
                                 "exp(x - m_new)"),))


def merge_stats(x):
    """(m, l) of x in float64: the max and the sum of exp(x - m)."""
    x = x.astype(np.float64)
    return np.array([x.max(), np.exp(x - x.max()).sum()])


def _tree_without_rescaling(x):
    """The halving-stride tree (strides 128 .. 1) merging (m, l) with l1 + l2, not rescaled."""
    m = np.full(MERGE_THREADS, -np.inf)
    l = np.zeros(MERGE_THREADS)
    m[:x.size], l[:x.size] = x.astype(np.float64), 1.0
    stride = MERGE_THREADS // 2
    while stride:
        m[:stride], l[:stride] = np.maximum(m[:stride], m[stride:2 * stride]), \
            l[:stride] + l[stride:2 * stride]
        stride //= 2
    return np.array([m[0], l[0]])


def merge_case(rng, n):
    """A case of puzzle_merge: n <= 256 scores, one of them HOT."""
    x = values(rng, (n,)) * np.float32(4)
    x[int(rng.integers(n))] = np.float32(HOT)
    return RowCase(f"n = {n}", (1,), (MERGE_THREADS,), {"x": x}, _poison(rng, (2,)),
                   merge_stats(x), 0, 0, budgets={"x": n},
                   known_wrong=(("the partial sums not rescaled", _tree_without_rescaling(x),
                                 "two halves (m1, l1) and (m2, l2) were summed as l1 + l2, but "
                                 "each l is taken against its own max: l = l1 exp(m1 - m) + "
                                 "l2 exp(m2 - m) with m = max(m1, m2)"),))


def flash_reads(N, d, causal):
    """Elements of K (or V) a fused kernel loads: each K/V tile once per query tile that needs
    it (with ``causal``, the tiles after the query tile's last row are skipped)."""
    total = 0
    for i0 in range(0, N, BR):
        last = min(i0 + BR, N) - 1
        for j0 in range(0, N, BC):
            if not causal or j0 <= last:
                total += min(BC, N - j0) * d
    return total


def rounding_slack(Q, K, V, scale):
    """How far each query row of a correct float32 kernel may land from float64's, as an N x 1
    column. A score is a sum of d products; in float32 its rounding errors add up like a random
    walk, to about sqrt(d + 2) u times the sum of the products' sizes (u = 2^-24; the worst case,
    d + 2 times, is never reached). Scores off by e move softmax's weights by a factor within
    exp(-2e)..exp(2e), so the weighted mean of V's rows by at most 2 (exp(2e) - 1) max|V|: about
    4 e, a margin of 4 over the walk's typical step. Around 1e-5 for an ordinary row; for the hot
    row, whose scores reach HOT, a few 1e-3: where two of its scores near 1000 share the weight,
    their rounding moves the output by more than TOLERANCE (1.2e-4 in a graded class of 100,
    which failed the solution; tests/test_labs_attention_lab.py)."""
    sizes = np.abs(Q.astype(np.float64)) @ np.abs(K.astype(np.float64)).T * scale
    e = np.sqrt(Q.shape[1] + 2) * UNIT * sizes.max(axis=1, keepdims=True)
    return 2 * np.expm1(2 * e) * float(np.abs(V).max())


def flash_case(rng, N, d, causal):
    """A case of lab_flash: Q, K, V of N x d, the last query row hot."""
    Q, K, V = (values(rng, (N, d)) for _ in range(3))
    scale = 1.0 / math.sqrt(d)
    scores = Q[-1].astype(np.float64) @ K.T.astype(np.float64) * scale
    Q[-1] = Q[-1] * np.float32(HOT / float(scores.max()))
    runs = {"acc": dict(rescale_acc=False), "both": dict(rescale_acc=False, rescale_sum=False)}
    wrong = [(f"the accumulator not rescaled{' (key by key)' if tile == 1 else ''}",
              tiled_attention(Q, K, V, BR, tile, causal, **flags).O,
              "when a K/V tile raises a row's max from m to m', the output accumulated so far "
              "(acc) was weighted against the old max: multiply acc, and l, by exp(m - m') "
              "before adding the new tile's terms")
             for tile in (BC, 1) for flags in runs.values()]
    if causal:
        wrong += [("a causal mask off by one", tiled_attention(Q, K, V, BR, BC, True,
                                                               mask_shift=shift).O,
                   f"query i attends to keys j <= i: the key at j = i is its own (keep it) and "
                   f"j = i + 1 is the future (mask it); this kernel "
                   f"{'masked the diagonal' if shift < 0 else 'let one future key in'}")
                  for shift in (-1, 1)]
    else:
        wrong.append(("a causal mask where none was asked", attention_reference(Q, K, V, True),
                      "causal is 0 in this case: every query attends to every key"))
    padded = -N % BC
    if padded and not causal:           # (a causal mask hides the padded keys anyway)
        # The last tile's rows past N hold zeros, or the previous tile's keys left over.
        last = N - (BC - padded)                # the last tile's first row
        stale = np.arange(last - padded, last) if last >= BC else None
        fills = [np.zeros((padded, d), np.float32)] + ([] if stale is None else [K[stale]])
        fills_v = [np.zeros((padded, d), np.float32)] + ([] if stale is None else [V[stale]])
        for k_fill, v_fill in zip(fills, fills_v, strict=True):
            wrong.append(("keys past N counted",
                          attention_reference(Q, np.vstack([K, k_fill]), np.vstack([V, v_fill])),
                          f"the last K/V tile has only {BC - padded} of its {BC} rows inside K; "
                          f"its other rows hold zeros or the previous tile's keys, which are not "
                          f"keys of this tile and must weigh nothing (loop over the tile's rows "
                          f"inside K only)"))
    budget = flash_reads(N, d, causal)
    return RowCase(f"N = {N}, d = {d}, {'causal' if causal else 'not causal'}",
                   (math.ceil(N / BR),), (BR,),
                   {"Q": Q, "K": K, "V": V}, _poison(rng, (N, d)),
                   attention_reference(Q, K, V, causal), N - 1, BR,
                   budgets={"K": budget, "V": budget}, known_wrong=tuple(wrong), causal=causal,
                   slack=rounding_slack(Q, K, V, scale))

