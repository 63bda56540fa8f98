"""Attention tile by tile, as a fused kernel computes it, in NumPy.

A query tile of ``Br`` rows meets the K/V tiles of ``Bc`` rows one after another; for each of its
rows it keeps the running max m, the running sum l and the unnormalised output acc (in a kernel:
registers), rescales l and acc when a tile raises m, and divides by l once at the end. With
``causal``, query i sees keys j <= i, and a K/V tile that lies wholly after the query tile's last
row is never loaded (it is skipped, not masked).

The switches reproduce the classic mistakes exactly, so that a lab can recognise a result:
``rescale_acc`` / ``rescale_sum`` False leave acc / l unrescaled when the max grows,
``subtract_max`` False takes exp of the raw scores, ``mask_shift`` moves the causal diagonal
(-1: the diagonal itself masked, +1: one future key let in).
"""
import math
from dataclasses import dataclass

import numpy as np

from ..numeric_args import whole_number


@dataclass(frozen=True)
class TiledRun:
    """What :func:`tiled_attention` computed: ``O`` (N x d), the final ``m`` and ``l`` of each row,
    and the count of (query tile, K/V tile) pairs ``visited`` and ``skipped``."""
    O: np.ndarray
    m: np.ndarray
    l: np.ndarray
    visited: int
    skipped: int


def kv_tiles_visited(N, Br, Bc, causal=False, N_k=None):
    """How many (query tile, K/V tile) pairs a fused kernel computes for N queries and ``N_k``
    keys (N by default): all of them, or with ``causal`` those whose first key is not after the
    query tile's last row."""
    Br, Bc = whole_number("Br", Br), whole_number("Bc", Bc)
    N_k = N if N_k is None else N_k
    key_tiles = math.ceil(N_k / Bc)
    if not causal:
        return math.ceil(N / Br) * key_tiles
    return sum(min(key_tiles, (min(i0 + Br, N) - 1) // Bc + 1) for i0 in range(0, N, Br))


def tiled_attention(Q, K, V, Br, Bc, causal=False, scale=None, dtype=np.float64,
                    rescale_acc=True, rescale_sum=True, subtract_max=True, mask_shift=0):
    """softmax(Q K^T scale) V computed tile by tile in ``dtype`` (see the module docstring);
    returns a :class:`TiledRun`."""
    Br, Bc = whole_number("Br", Br), whole_number("Bc", Bc)
    Q, K, V = (np.asarray(a, dtype=dtype) for a in (Q, K, V))
    N, d = Q.shape
    scale = dtype(1.0 / math.sqrt(d) if scale is None else scale)
    O, m_all, l_all = np.empty((N, d), dtype), np.empty(N, dtype), np.empty(N, dtype)
    visited = skipped = 0
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for i0 in range(0, N, Br):
            rows = np.arange(i0, min(i0 + Br, N))
            m = np.full(rows.size, -np.inf, dtype)
            l, acc = np.zeros(rows.size, dtype), np.zeros((rows.size, d), dtype)
            for j0 in range(0, K.shape[0], Bc):
                if causal and j0 > rows[-1] + mask_shift:
                    skipped += 1
                    continue
                visited += 1
                cols = np.arange(j0, min(j0 + Bc, K.shape[0]))
                s = (Q[rows] @ K[cols].T) * scale
                if causal:
                    s = np.where(cols[None, :] <= rows[:, None] + mask_shift, s, -np.inf)
                m_new = np.maximum(m, s.max(axis=1)) if subtract_max else np.zeros_like(m)
                p = np.exp(s - m_new[:, None])
                gap = np.where(m == -np.inf, 0, np.exp(m - m_new)).astype(dtype)
                l = (l * gap if rescale_sum else l) + p.sum(axis=1, dtype=dtype)
                acc = (acc * gap[:, None] if rescale_acc else acc) + p @ V[cols]
                m = m_new
            O[rows], m_all[rows], l_all[rows] = acc / l[:, None], m, l
    return TiledRun(O, m_all, l_all, visited, skipped)
