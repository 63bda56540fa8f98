"""Five single-thread CPU GEMMs, C = A B in FP32, compiled by Numba (no parallelism).

- ``naive_ijk``: one output at a time, its dot product over k in a register (the textbook loop).
- ``reordered_ikj``: k moved outside j; the inner loop streams a row of B and a row of C and reuses
  one element of A for a whole row of outputs.
- ``tiled_16``, ``tiled_32``, ``tiled_64``: the i-k-j loop inside T x T blocks, so a block of A,
  a block of B and a block of C can stay in cache while they are reused.

All five add the products of each C[i, j] in the same order (k = 0, 1, ..., K-1) and Numba does
not fuse multiply and add without ``fastmath``, so they return bit-identical results; only the
order in which *different* outputs progress changes, and with it the memory traffic.
"""
from functools import partial

import numpy as np
from numba import njit


@njit(cache=True)
def _ijk(A, B, C):
    M, K = A.shape
    N = B.shape[1]
    for i in range(M):
        for j in range(N):
            acc = np.float32(0.0)
            for k in range(K):
                acc += A[i, k] * B[k, j]
            C[i, j] = acc


@njit(cache=True)
def _ikj(A, B, C):
    M, K = A.shape
    N = B.shape[1]
    C[:, :] = 0.0
    for i in range(M):
        for k in range(K):
            a = A[i, k]
            for j in range(N):
                C[i, j] += a * B[k, j]


@njit(cache=True)
def _tiled(A, B, C, T):
    M, K = A.shape
    N = B.shape[1]
    C[:, :] = 0.0
    for i0 in range(0, M, T):
        i1 = min(i0 + T, M)
        for k0 in range(0, K, T):
            k1 = min(k0 + T, K)
            for j0 in range(0, N, T):
                width = min(T, N - j0)
                for i in range(i0, i1):
                    c_row = C[i, j0:j0 + width]
                    for k in range(k0, k1):
                        a = A[i, k]
                        b_row = B[k, j0:j0 + width]
                        for j in range(width):    # rows as views: the compiler vectorises this loop
                            c_row[j] += a * b_row[j]


def _check(A, B):
    for name, M in (("A", A), ("B", B)):
        if not isinstance(M, np.ndarray):
            raise TypeError(f"{name} must be a NumPy array, got {type(M).__name__}")
        if M.ndim != 2:
            raise ValueError(f"{name} must be a matrix (2-D), got an array of shape {M.shape}")
        if M.dtype != np.float32:
            raise TypeError(f"{name} must be float32 (these baselines are FP32), got {M.dtype}; "
                            f"convert with {name}.astype(np.float32)")
        if not M.flags.c_contiguous:
            raise ValueError(f"{name} must be C-contiguous (row-major, no gaps): a transposed or "
                             f"sliced view is not; pass np.ascontiguousarray({name})")
    if A.shape[1] != B.shape[0]:
        raise ValueError(f"inner dimensions differ: A is {A.shape} and B is {B.shape}; "
                         f"A's column count must equal B's row count")


def _run(kernel, A, B, *extra):
    _check(A, B)
    C = np.empty((A.shape[0], B.shape[1]), dtype=np.float32)
    kernel(A, B, C, *extra)
    return C


def naive_ijk(A, B):
    """C = A B with loops i, j, k and the dot product in a register."""
    return _run(_ijk, A, B)


def reordered_ikj(A, B):
    """C = A B with loops i, k, j: the inner loop runs along rows of B and C."""
    return _run(_ikj, A, B)


def tiled(A, B, tile):
    """C = A B with the i-k-j loop inside ``tile`` x ``tile`` blocks (edges handled)."""
    if isinstance(tile, bool) or not isinstance(tile, (int, np.integer)) or tile < 1:
        raise ValueError(f"tile must be a whole number >= 1, got {tile!r}")
    return _run(_tiled, A, B, int(tile))


KERNELS = {
    "naive_ijk": naive_ijk,
    "reordered_ikj": reordered_ikj,
    "tiled_16": partial(tiled, tile=16),
    "tiled_32": partial(tiled, tile=32),
    "tiled_64": partial(tiled, tile=64),
}


def names():
    """The five CPU versions, in the order the lesson presents them."""
    return list(KERNELS)


def run(name, A, B):
    """C = A B with the CPU version called ``name``."""
    if name not in KERNELS:
        raise ValueError(f"unknown CPU GEMM {name!r}; expected one of {', '.join(KERNELS)}")
    return KERNELS[name](A, B)
