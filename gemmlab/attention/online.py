"""Softmax in one pass over its inputs (the online softmax of Milakov and Gimelshein, 2018).

A row's softmax needs its maximum m (subtracted before exp, so that no exponential overflows) and
the sum l of exp(s - m). Read in tiles, the row's maximum is only known at the end; the online
form keeps the running maximum and the running sum of what it has seen, and when a tile raises
the maximum from m to m', it multiplies what it summed so far by exp(m - m') (the rescaling).
Two partial states (m1, l1) and (m2, l2) merge the same way, in any order: that is what lets a
block of threads reduce a row as a tree.
"""
import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class OnlineState:
    """The running statistics of a row: ``m`` the largest score seen, ``l`` the sum of
    exp(s - m) over the scores seen (-inf and 0 before any)."""
    m: float = -math.inf
    l: float = 0.0

    def add(self, scores):
        """The state after the tile ``scores`` (a 1-D array): the max first, then the old sum
        rescaled by exp(m_old - m_new), plus the tile's own terms."""
        scores = np.asarray(scores, dtype=np.float64)
        if scores.size == 0:
            return self
        m = max(self.m, float(scores.max()))
        return OnlineState(m, self.l * _exp_gap(self.m, m) + float(np.exp(scores - m).sum()))


def _exp_gap(old, new):
    """exp(old - new), with exp(-inf - x) = 0 (nothing seen yet weighs nothing)."""
    return 0.0 if old == -math.inf else math.exp(old - new)


def merge_states(a, b):
    """The state of the union of two parts of a row, from their states: each sum rescaled to the
    larger maximum."""
    m = max(a.m, b.m)
    if m == -math.inf:
        return OnlineState()
    return OnlineState(m, a.l * _exp_gap(a.m, m) + b.l * _exp_gap(b.m, m))


def online_steps(scores, tile):
    """The states after each tile of ``tile`` scores of a row: [(tile's scores, state after)]."""
    if int(tile) < 1:
        raise ValueError(f"tile must be a positive whole number of scores, got {tile!r}")
    scores = np.asarray(scores, dtype=np.float64).ravel()
    state, steps = OnlineState(), []
    for start in range(0, scores.size, int(tile)):
        part = scores[start:start + int(tile)]
        state = state.add(part)
        steps.append((part, state))
    return steps


def online_softmax(scores, tile=1):
    """softmax(scores) from the online statistics of one pass (then exp(s - m) / l)."""
    scores = np.asarray(scores, dtype=np.float64).ravel()
    steps = online_steps(scores, tile)
    final = steps[-1][1] if steps else OnlineState()
    return np.exp(scores - final.m) / final.l


def softmax_reference(scores, subtract_max=True, dtype=np.float64):
    """softmax of each row (the last axis) of ``scores`` in ``dtype``, with or without the max
    subtracted (without it, a score past log(largest finite number of dtype) overflows: inf / inf
    is NaN)."""
    s = np.asarray(scores, dtype=dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(s - s.max(axis=-1, keepdims=True)) if subtract_max else np.exp(s)
        return e / e.sum(axis=-1, keepdims=True, dtype=dtype)


def attention_reference(Q, K, V, causal=False, scale=None):
    """softmax(Q K^T scale) V in float64 (scale 1/sqrt(d) by default), query i attending to keys
    j <= i when ``causal``. Q: N x d, K and V: N_k x d."""
    Q, K, V = (np.asarray(a, dtype=np.float64) for a in (Q, K, V))
    if Q.ndim != 2 or K.shape != V.shape or K.shape[1] != Q.shape[1]:
        raise ValueError(f"expected Q (N x d), K and V (N_k x d), got {Q.shape}, {K.shape}, "
                         f"{V.shape}")
    scale = 1.0 / math.sqrt(Q.shape[1]) if scale is None else scale
    S = Q @ K.T * scale
    if causal:
        S = np.where(np.tri(Q.shape[0], K.shape[0], dtype=bool), S, -np.inf)
    P = np.exp(S - S.max(axis=1, keepdims=True))
    return (P / P.sum(axis=1, keepdims=True)) @ V
