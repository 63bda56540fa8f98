"""Rung 2, ``tiled``: T x T shared-memory tiles, one output per thread (lesson 05).

A block of T x T threads owns a T x T tile of C. Walking along K, it copies a T x T tile of A and
one of B into shared memory (each thread one element of each), waits at a barrier, and every
thread then reads a row of the A tile and a column of the B tile from shared memory. Each element
loaded from DRAM is used by T threads, so the idealised DRAM traffic drops by a factor T.
Loads outside the matrices are filled with zeros, so any M, N, K works.
"""
from functools import lru_cache

from numba import float32

from .. import device
from ._common import FLOAT32_BYTES, SIGNATURE, Plan, require

cuda = device.cuda()   # a module global: the simulator swaps it for its fake module

PARAMS = ("T",)
TILES = {"sim": {"T": 8}, "gpu": {"T": 32}}   # default tile side


def plan(T):
    require(T >= 1, f"tiled needs a tile side T >= 1, got T={T}")
    return Plan(block=(T, T), tile_m=T, tile_n=T, smem_bytes=2 * T * T * FLOAT32_BYTES)


@lru_cache(maxsize=None)
def kernel(T):
    """The compiled kernel for T x T tiles (cached per T)."""
    @cuda.jit(SIGNATURE)
    def tiled(A, B, C_in, C_out, alpha, beta):
        # One shared array per line: the simulator keys shared arrays by source line.
        As = cuda.shared.array((T, T), float32)
        Bs = cuda.shared.array((T, T), float32)
        M = A.shape[0]
        K = A.shape[1]
        N = B.shape[1]
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        row = cuda.blockIdx.y * T + ty
        col = cuda.blockIdx.x * T + tx
        acc = float32(0)
        for k0 in range(0, K, T):
            a = float32(0)
            if row < M and k0 + tx < K:
                a = A[row, k0 + tx]
            As[ty, tx] = a
            b = float32(0)
            if k0 + ty < K and col < N:
                b = B[k0 + ty, col]
            Bs[ty, tx] = b
            cuda.syncthreads()          # the tiles are complete before anyone reads them
            for k in range(T):
                acc += As[ty, k] * Bs[k, tx]
            cuda.syncthreads()          # everyone is done reading before the next overwrite
        if row < M and col < N:
            out = alpha * acc
            if beta != 0:
                out += beta * C_in[row, col]
            C_out[row, col] = out

    return tiled
