"""Rung 3, ``pingpong``: ``tiled`` with two shared buffers per operand (lesson 08).

The block, its T x T threads and their one output each are those of ``tiled``; only the walk
along K changes. While the block computes K-tile t from shared buffer t % 2, each thread has
already issued the global loads of tile t+1 into registers; after the compute it stores them into
the other buffer, (t+1) % 2. A global load does not stall a thread until its register is used, so
the DRAM latency of tile t+1 overlaps the multiply-adds of tile t. This register-staged prefetch
is the pre-Ampere way to double buffer (numba-cuda has no cp.async). The buffer is chosen by
index arithmetic (an offset into the shared arrays), not by a branch.

Why one barrier per tile suffices: iteration t reads buffer t % 2 and writes buffer (t+1) % 2;
the barrier at its end both publishes tile t+1 and guarantees that nobody still reads buffer
t % 2 when iteration t+1 starts overwriting it. ``tiled``, with one buffer, needs two barriers
per tile, and its loads cannot start before the previous tile's compute has finished.
"""
from functools import lru_cache

from numba import float32

from .. import device
from ._common import FLOAT32_BYTES, SIGNATURE, Plan, require

cuda = device.cuda()   # a module global: the simulator swaps it for its fake module

PARAMS = ("T",)
TILES = {"sim": {"T": 8}, "gpu": {"T": 32}}   # default tile side, as for ``tiled``
# Device functions are inlined on the GPU; the simulator takes no such option.
INLINE = {} if device.backend() == "sim" else {"forceinline": True}


def plan(T):
    require(T >= 1, f"pingpong needs a tile side T >= 1, got T={T}")
    return Plan(block=(T, T), tile_m=T, tile_n=T, smem_bytes=2 * 2 * T * T * FLOAT32_BYTES)


@lru_cache(maxsize=None)
def kernel(T):
    """The compiled kernel for T x T tiles, two buffers of each (cached per T)."""
    @cuda.jit(device=True, **INLINE)
    def element_or_zero(X, r, c):
        """X[r, c], or 0 outside X: tiles past the edges are zero-filled, so any M, N, K works."""
        if r < X.shape[0] and c < X.shape[1]:
            return X[r, c]
        return float32(0)

    @cuda.jit(SIGNATURE)
    def pingpong(A, B, C_in, C_out, alpha, beta):
        # One shared array per line: the simulator keys shared arrays by source line.
        As = cuda.shared.array((2, T, T), float32)    # [buffer, row, k]
        Bs = cuda.shared.array((2, T, T), float32)    # [buffer, k, col]
        M = A.shape[0]
        K = A.shape[1]
        N = B.shape[1]
        tx = cuda.threadIdx.x
        ty = cuda.threadIdx.y
        row = cuda.blockIdx.y * T + ty
        col = cuda.blockIdx.x * T + tx
        # Prologue: tile 0 into buffer 0; nothing to compute yet.
        As[0, ty, tx] = element_or_zero(A, row, tx)
        Bs[0, ty, tx] = element_or_zero(B, ty, col)
        cuda.syncthreads()
        tiles = (K + T - 1) // T
        acc = float32(0)
        for t in range(tiles):
            # ---- step: k_tile
            cur = t % 2                     # the buffer that holds tile t; 1 - cur is free
            # ---- step: prefetch
            a_next = element_or_zero(A, row, (t + 1) * T + tx)   # tile t+1: the loads are
            b_next = element_or_zero(B, (t + 1) * T + ty, col)   # issued, nobody waits yet
            # ---- end: prefetch
            for k in range(T):              # compute tile t meanwhile
                acc += As[cur, ty, k] * Bs[cur, k, tx]
            if t + 1 < tiles:               # then park tile t+1 in the other buffer
                As[1 - cur, ty, tx] = a_next
                Bs[1 - cur, ty, tx] = b_next
            cuda.syncthreads()              # publishes t+1 and frees buffer cur: one barrier
            # ---- end: k_tile
        # Epilogue: the last tile was computed in the loop; write the output once.
        if row < M and col < N:
            out = alpha * acc
            if beta != 0:
                out += beta * C_in[row, col]
            C_out[row, col] = out

    return pingpong
