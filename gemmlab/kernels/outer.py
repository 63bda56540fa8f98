"""Rung 4, ``outer``: register blocking with an outer-product micro-kernel (lesson 10).

Each thread owns a TM x TN micro-tile of C in registers. For every k of a shared-memory K-tile
it reads TM values of A and TN values of B (TM + TN shared loads) and performs TM*TN fused
multiply-adds: the outer product of the two vectors (``micro_kernel``). Reuse per value read
grows from 1/2 FMA (``tiled`` and ``pingpong``: one output per thread) to TM*TN / (TM + TN).

The walk along K is lesson 08's ``pingpong``: two shared buffers, the next K-tile fetched into
registers before the current one is computed, one barrier per tile. Here the loop is written two
tiles per trip, so that each call of ``k_tile`` names its buffer by a constant. How the tiles
travel from global memory into shared memory, and where each thread's outputs lie, is in
``_blocked``.
"""
from functools import lru_cache
from types import SimpleNamespace

from numba import float32, uint32

from .. import device
from . import _blocked
from ._common import SIGNATURE

cuda = device.cuda()   # a module global: the simulator swaps it for its fake module

PARAMS = _blocked.PARAMS
TILES = {"sim": {"BM": 16, "BN": 16, "BK": 4, "TM": 8, "TN": 8},
         "gpu": {"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8}}
INLINE = _blocked.INLINE


def plan(BM, BN, BK, TM, TN):
    return _blocked.plan("outer", 2, BM, BN, BK, TM, TN)


@lru_cache(maxsize=None)
def micro_kernel(BM, BN, BK, TM, TN):
    """The device functions of lesson 10 for one set of tile constants: read this thread's
    fragments of A and B at depth k from shared buffer s, and add their outer product into the
    TM x TN accumulators."""
    g = _blocked.device_functions(BM, BN, BK, TM, TN)
    row_of, col_of = g.row_of, g.col_of

    @cuda.jit(device=True, **INLINE)
    def read_a(As, s, k, ty, a):
        """Shared -> registers: the TM values of A this thread needs at depth k."""
        for i in range(TM):
            a[i] = As[s, uint32(k), row_of(i, ty)]

    @cuda.jit(device=True, **INLINE)
    def read_b(Bs, s, k, tx, b):
        """Shared -> registers: the TN values of B this thread needs at depth k."""
        for j in range(TN):
            b[j] = Bs[s, uint32(k), col_of(j, tx)]

    @cuda.jit(device=True, **INLINE)
    def outer_update(acc, a, b):
        """acc += a b^T: TM*TN fused multiply-adds from TM + TN values in registers."""
        for i in range(TM):
            for j in range(TN):
                acc[i, j] += a[i] * b[j]

    @cuda.jit(device=True, **INLINE)
    def clear(acc):
        for i in range(TM):
            for j in range(TN):
                acc[i, j] = float32(0)

    return SimpleNamespace(read_a=read_a, read_b=read_b, outer_update=outer_update, clear=clear)


@lru_cache(maxsize=None)
def kernel(BM, BN, BK, TM, TN):
    """The compiled kernel for a BM x BN block tile, depth BK, TM x TN per thread (cached)."""
    g = _blocked.device_functions(BM, BN, BK, TM, TN)
    coords, LA, LB, BMP, ALIGN = g.coords, g.LA, g.LB, g.BMP, _blocked.ALIGN
    fetch_a, fetch_b, stash_a, stash_b, write_c = (
        g.fetch_a, g.fetch_b, g.stash_a, g.stash_b, g.write_c)
    mk = micro_kernel(BM, BN, BK, TM, TN)
    read_a, read_b, outer_update, clear = mk.read_a, mk.read_b, mk.outer_update, mk.clear

    @cuda.jit(device=True, **INLINE)
    def k_tile(A, B, As, Bs, t, tiles, cur, m0, n0, tid, ty, tx, acc, a, b, ra, rb):
        """K-tile t from shared buffer ``cur`` (a constant at each call site), as ``pingpong``
        walks it: prefetch tile t+1 into registers, compute tile t, park t+1, one barrier."""
        more = t + 1 < tiles
        if more:
            fetch_a(A, m0, (t + 1) * BK, tid, ra)
            fetch_b(B, (t + 1) * BK, n0, tid, rb)
        # ---- step: k_loop
        for k in range(BK):             # one outer product per k
            read_a(As, cur, k, ty, a)
            read_b(Bs, cur, k, tx, b)
            outer_update(acc, a, b)
        # ---- end: k_loop
        if more:
            stash_a(As, 1 - cur, tid, ra)
            stash_b(Bs, 1 - cur, tid, rb)
        cuda.syncthreads()

    @cuda.jit(SIGNATURE)
    def outer(A, B, C_in, C_out, alpha, beta):
        As = cuda.shared.array((2, BK, BMP), float32, alignment=ALIGN)
        Bs = cuda.shared.array((2, BK, BN), float32, alignment=ALIGN)
        acc = cuda.local.array((TM, TN), float32)     # this thread's TM x TN outputs
        a = cuda.local.array(TM, float32)             # its fragment of A at one k
        b = cuda.local.array(TN, float32)             # and of B
        ra = cuda.local.array(LA, float32)            # the next K-tile, on its way to shared
        rb = cuda.local.array(LB, float32)
        tid = cuda.threadIdx.x
        ty, tx = coords(tid)
        m0 = cuda.blockIdx.y * BM
        n0 = cuda.blockIdx.x * BN
        K = A.shape[1]
        clear(acc)
        # Prologue: tile 0 into buffer 0; nothing to compute yet.
        fetch_a(A, m0, 0, tid, ra)
        fetch_b(B, 0, n0, tid, rb)
        stash_a(As, 0, tid, ra)
        stash_b(Bs, 0, tid, rb)
        cuda.syncthreads()
        tiles = (K + BK - 1) // BK
        for t in range(0, tiles, 2):    # two tiles per trip: ping (buffer 0), then pong (1)
            k_tile(A, B, As, Bs, t, tiles, 0, m0, n0, tid, ty, tx, acc, a, b, ra, rb)
            if t + 1 < tiles:
                k_tile(A, B, As, Bs, t + 1, tiles, 1, m0, n0, tid, ty, tx, acc, a, b, ra, rb)
        # Epilogue: the last tile was computed in the loop; write the accumulators once.
        write_c(C_in, C_out, alpha, beta, acc, m0, n0, ty, tx)

    return outer
