"""Rung 4, ``pingpong``: ``outer`` plus two shared-memory buffers (lesson 08).

While the block computes K-tile t from shared buffer t % 2, each thread has already issued the
global loads of tile t+1 into registers; after the compute it stores them into the other buffer,
(t+1) % 2. A global load does not stall a thread until its register is used, so the DRAM latency
of tile t+1 overlaps the FMAs of tile t. This register-staged prefetch is the pre-Ampere way to
double buffer (numba-cuda has no cp.async). The buffer is chosen by index arithmetic (an offset),
not by a branch.

Why one barrier per tile suffices: iteration t reads buffer t % 2 and writes buffer (t+1) % 2;
the barrier at its end both publishes tile t+1 and guarantees that nobody still reads buffer
t % 2 when iteration t+1 starts overwriting it. The single-buffer ``outer`` needs two barriers
per tile, and its loads cannot start before the previous tile's compute has finished.
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
    return _blocked.plan("pingpong", 2, BM, BN, BK, TM, TN)


@lru_cache(maxsize=None)
def kernel(BM, BN, BK, TM, TN):
    """The compiled kernel (cached per tile constants); same tiles as ``outer`` twice in shared."""
    g = _blocked.device_functions(BM, BN, BK, TM, TN)
    coords, LA, LB, BMP, ALIGN = g.coords, g.LA, g.LB, g.BMP, _blocked.ALIGN
    fetch_a, fetch_b, stash_a, stash_b = g.fetch_a, g.fetch_b, g.stash_a, g.stash_b
    read_a, read_b, outer_update, clear, write_c = (
        g.read_a, g.read_b, g.outer_update, g.clear, g.write_c)

    # ---- step: k_tile
    @cuda.jit(device=True, **_blocked.INLINE)
    def step(A, B, As, Bs, t, tiles, cur, m0, n0, tid, ty, tx, acc, a, b, ra, rb):
        """K-tile t: prefetch tile t+1 into registers, compute tile t from buffer ``cur``, park
        tile t+1 in buffer 1 - cur, barrier. ``cur`` is a constant at each call site, so the
        buffer is a fixed offset into the shared arrays: no branch, no runtime address math."""
        more = t + 1 < tiles
        # ---- step: prefetch
        if more:                        # issue the loads of tile t+1; they land in registers
            fetch_a(A, m0, (t + 1) * BK, tid, ra)
            fetch_b(B, (t + 1) * BK, n0, tid, rb)
        # ---- end: prefetch
        for k in range(BK):             # steady state: compute tile t meanwhile
            read_a(As, cur, k, ty, a)
            read_b(Bs, cur, k, tx, b)
            outer_update(acc, a, b)
        if more:                        # then park tile t+1 in the other buffer
            stash_a(As, 1 - cur, tid, ra)
            stash_b(Bs, 1 - cur, tid, rb)
        cuda.syncthreads()
    # ---- end: k_tile

    @cuda.jit(SIGNATURE)
    def pingpong(A, B, C_in, C_out, alpha, beta):
        As = cuda.shared.array((2, BK, BMP), float32, alignment=ALIGN)
        Bs = cuda.shared.array((2, BK, BN), float32, alignment=ALIGN)
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
        # Prologue: tile 0 into buffer 0; nothing to compute yet.
        fetch_a(A, m0, 0, tid, ra)
        fetch_b(B, 0, n0, tid, rb)
        stash_a(As, 0, tid, ra)
        stash_b(Bs, 0, tid, rb)
        cuda.syncthreads()
        tiles = (K + BK - 1) // BK
        for t in range(0, tiles, 2):    # two tiles per trip: ping (buffer 0), then pong (1)
            step(A, B, As, Bs, t, tiles, 0, m0, n0, tid, ty, tx, acc, a, b, ra, rb)
            if t + 1 < tiles:
                step(A, B, As, Bs, t + 1, tiles, 1, m0, n0, tid, ty, tx, acc, a, b, ra, rb)
        # Epilogue: the last tile was computed in the loop; write the accumulators once.
        write_c(C_in, C_out, alpha, beta, acc, m0, n0, ty, tx)

    return pingpong
