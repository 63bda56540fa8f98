"""Rung 3, ``outer``: register blocking with an outer-product micro-kernel (lesson 10).

Each thread owns a TM x TN micro-tile of C in registers. For every k of a shared-memory K-tile
it reads TM values of A and TN values of B (TM + TN shared loads) and performs TM*TN fused
multiply-adds: the outer product of the two vectors. Reuse per loaded value grows from 1/2 FMA
(one output per thread) to TM*TN / (TM + TN). One shared buffer: load, barrier, compute,
barrier, as in ``tiled``. See ``_blocked`` for the data layout.
"""
from functools import lru_cache

from numba import float32

from .. import device
from . import _blocked
from ._common import SIGNATURE

cuda = device.cuda()   # a module global: the simulator swaps it for its fake module

PARAMS = _blocked.PARAMS
TILES = {"sim": {"BM": 16, "BN": 16, "BK": 4, "TM": 8, "TN": 8},
         "gpu": {"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8}}


def plan(BM, BN, BK, TM, TN):
    return _blocked.plan("outer", 1, BM, BN, BK, TM, TN)


@lru_cache(maxsize=None)
def kernel(BM, BN, BK, TM, TN):
    """The compiled kernel for a BM x BN block tile, depth BK, TM x TN per thread (cached)."""
    g = _blocked.device_functions(BM, BN, BK, TM, TN)
    coords, LA, LB, BMP, ALIGN = g.coords, g.LA, g.LB, g.BMP, _blocked.ALIGN
    fetch_a, fetch_b, stash_a, stash_b = g.fetch_a, g.fetch_b, g.stash_a, g.stash_b
    read_a, read_b, outer_update, clear, write_c = (
        g.read_a, g.read_b, g.outer_update, g.clear, g.write_c)

    @cuda.jit(SIGNATURE)
    def outer(A, B, C_in, C_out, alpha, beta):
        As = cuda.shared.array((1, BK, BMP), float32, alignment=ALIGN)
        Bs = cuda.shared.array((1, BK, BN), float32, alignment=ALIGN)
        acc = cuda.local.array((TM, TN), float32)
        a = cuda.local.array(TM, float32)
        b = cuda.local.array(TN, float32)
        ra = cuda.local.array(LA, float32)
        rb = cuda.local.array(LB, float32)
        tid = cuda.threadIdx.x
        ty, tx = coords(tid)
        m0 = cuda.blockIdx.y * BM
        n0 = cuda.blockIdx.x * BN
        K = A.shape[1]
        clear(acc)
        for k0 in range(0, K, BK):
            fetch_a(A, m0, k0, tid, ra)
            fetch_b(B, k0, n0, tid, rb)
            stash_a(As, 0, tid, ra)
            stash_b(Bs, 0, tid, rb)
            cuda.syncthreads()          # the tile is complete before anyone reads it
            for k in range(BK):
                read_a(As, 0, k, ty, a)
                read_b(Bs, 0, k, tx, b)
                outer_update(acc, a, b)
            cuda.syncthreads()          # everyone is done reading before it is overwritten
        write_c(C_in, C_out, alpha, beta, acc, m0, n0, ty, tx)

    return outer
