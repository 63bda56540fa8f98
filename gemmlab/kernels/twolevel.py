"""Rung 5, ``twolevel``: ``outer`` plus register-level ping-pong of the fragments (lesson 11).

Two levels of double buffering, each hiding the latency of the level above it:

- shared memory: two K-tile buffers, exactly as in ``outer`` (lesson 08's ping-pong, DRAM ->
  shared);
- registers: two sets of A/B fragments (a TM-vector and a TN-vector each). While the outer
  product of step k uses set k % 2, the shared loads of step k+1 go into the other set
  (shared -> registers).

Only the inputs are doubled: the TM x TN accumulators stay one set, so the register budget is
TM*TN + 2 (TM + TN) values. The k loop is written two steps at a time with two named fragment
sets so every register index is a compile-time constant (a runtime index would push the
fragments to local memory); BK must therefore be even. The fragment reads and the outer product
are ``outer``'s (``outer.micro_kernel``); the tile movement is ``_blocked``'s.
"""
from functools import lru_cache

from numba import float32

from .. import device
from . import _blocked, outer
from ._common import SIGNATURE

cuda = device.cuda()   # a module global: the simulator swaps it for its fake module

PARAMS = _blocked.PARAMS
# BK = 16 on a GPU: twolevel gains most over outer where few warps share an SM (lesson 11).
TILES = {"sim": {"BM": 16, "BN": 16, "BK": 4, "TM": 8, "TN": 8},
         "gpu": {"BM": 128, "BN": 128, "BK": 16, "TM": 8, "TN": 8}}
INLINE = _blocked.INLINE


def plan(BM, BN, BK, TM, TN):
    return _blocked.plan("twolevel", 2, BM, BN, BK, TM, TN, bk_multiple=2)


@lru_cache(maxsize=None)
def kernel(BM, BN, BK, TM, TN):
    """The compiled kernel (cached per tile constants)."""
    g = _blocked.device_functions(BM, BN, BK, TM, TN)
    coords, LA, LB, BMP, ALIGN = g.coords, g.LA, g.LB, g.BMP, _blocked.ALIGN
    fetch_a, fetch_b, stash_a, stash_b, write_c = (
        g.fetch_a, g.fetch_b, g.stash_a, g.stash_b, g.write_c)
    mk = outer.micro_kernel(BM, BN, BK, TM, TN)
    read_a, read_b, outer_update, clear = mk.read_a, mk.read_b, mk.outer_update, mk.clear

    @cuda.jit(device=True, **INLINE)
    def k_tile(A, B, As, Bs, t, tiles, cur, m0, n0, tid, ty, tx, acc, a0, b0, a1, b1, ra, rb):
        """K-tile t from shared buffer ``cur`` (a constant per call site), as in ``outer``,
        with the k loop fed by two register sets of fragments."""
        more = t + 1 < tiles
        if more:
            fetch_a(A, m0, (t + 1) * BK, tid, ra)
            fetch_b(B, (t + 1) * BK, n0, tid, rb)
        # ---- step: register_pingpong
        read_a(As, cur, 0, ty, a0)      # register prologue: the fragments of k = 0
        read_b(Bs, cur, 0, tx, b0)
        for k in range(0, BK - 2, 2):
            read_a(As, cur, k + 1, ty, a1)      # prefetch k+1 into the pong set ...
            read_b(Bs, cur, k + 1, tx, b1)
            outer_update(acc, a0, b0)           # ... while the ping set feeds the FMAs
            read_a(As, cur, k + 2, ty, a0)      # prefetch k+2 into the ping set ...
            read_b(Bs, cur, k + 2, tx, b0)
            outer_update(acc, a1, b1)           # ... while the pong set feeds the FMAs
        read_a(As, cur, BK - 1, ty, a1)         # register epilogue: the last pair of k,
        read_b(Bs, cur, BK - 1, tx, b1)         # with nothing left to prefetch after it
        outer_update(acc, a0, b0)
        outer_update(acc, a1, b1)
        # ---- end: register_pingpong
        if more:
            stash_a(As, 1 - cur, tid, ra)
            stash_b(Bs, 1 - cur, tid, rb)
        cuda.syncthreads()

    @cuda.jit(SIGNATURE)
    def twolevel(A, B, C_in, C_out, alpha, beta):
        As = cuda.shared.array((2, BK, BMP), float32, alignment=ALIGN)
        Bs = cuda.shared.array((2, BK, BN), float32, alignment=ALIGN)
        acc = cuda.local.array((TM, TN), float32)
        a0 = cuda.local.array(TM, float32)      # register ping
        b0 = cuda.local.array(TN, float32)
        a1 = cuda.local.array(TM, float32)      # register pong
        b1 = cuda.local.array(TN, float32)
        ra = cuda.local.array(LA, float32)
        rb = cuda.local.array(LB, float32)
        tid = cuda.threadIdx.x
        ty, tx = coords(tid)
        m0 = cuda.blockIdx.y * BM
        n0 = cuda.blockIdx.x * BN
        K = A.shape[1]
        clear(acc)
        fetch_a(A, m0, 0, tid, ra)
        fetch_b(B, 0, n0, tid, rb)
        stash_a(As, 0, tid, ra)
        stash_b(Bs, 0, tid, rb)
        cuda.syncthreads()
        tiles = (K + BK - 1) // BK
        for t in range(0, tiles, 2):    # shared ping (buffer 0), then shared pong (buffer 1)
            k_tile(A, B, As, Bs, t, tiles, 0, m0, n0, tid, ty, tx, acc, a0, b0, a1, b1, ra, rb)
            if t + 1 < tiles:
                k_tile(A, B, As, Bs, t + 1, tiles, 1, m0, n0, tid, ty, tx, acc, a0, b0, a1, b1,
                       ra, rb)
        write_c(C_in, C_out, alpha, beta, acc, m0, n0, ty, tx)

    return twolevel
