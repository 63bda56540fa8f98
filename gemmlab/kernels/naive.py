"""Rung 1, ``naive``: one thread per output element, its dot product read straight from DRAM.

Thread (x, y) of block (bx, by) computes C[by*BY + y, bx*BX + x]. Consecutive threads of a warp
take consecutive columns, so their reads of B and their writes of C are coalesced, and they all
read the same element of A (a broadcast). Nothing is reused on chip beyond what the caches keep:
in the idealised model every output reads a full row of A and a full column of B, 2K loads per
2K flops.
"""
from functools import lru_cache

from numba import float32

from .. import device
from ._common import SIGNATURE, Plan, require

cuda = device.cuda()   # a module global: the simulator swaps it for its fake module

PARAMS = ("BX", "BY")
TILES = {"sim": {"BX": 8, "BY": 4}, "gpu": {"BX": 32, "BY": 8}}   # default threads per block


def plan(BX, BY):
    require(BX >= 1 and BY >= 1, f"naive needs BX >= 1 and BY >= 1 threads, got BX={BX}, BY={BY}")
    # A block computes BY x BX outputs, but shares nothing on chip: reuse 1 x 1 in the model.
    return Plan(block=(BX, BY), tile_m=BY, tile_n=BX, smem_bytes=0, reuse_m=1, reuse_n=1)


@lru_cache(maxsize=None)
def kernel(BX, BY):
    """The compiled kernel for a BX x BY thread block (cached per constants)."""
    @cuda.jit(SIGNATURE)
    def naive(A, B, C_in, C_out, alpha, beta):
        M = A.shape[0]
        K = A.shape[1]
        N = B.shape[1]
        col = cuda.blockIdx.x * BX + cuda.threadIdx.x
        row = cuda.blockIdx.y * BY + cuda.threadIdx.y
        if row < M and col < N:
            acc = float32(0)
            for k in range(K):
                acc += A[row, k] * B[k, col]
            out = alpha * acc
            if beta != 0:
                out += beta * C_in[row, col]
            C_out[row, col] = out

    return naive
