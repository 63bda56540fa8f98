"""How the register-blocked rungs (``outer`` and those after it) move their tiles: not any lesson's
point, so kept out of the rung files.

A block of ``(BM/TM) x (BN/TN)`` threads owns a BM x BN tile of C; each thread owns TM x TN
outputs. Per K-tile of depth BK the block stages A (BM x BK) and B (BK x BN) in shared memory.
This module holds the launch plan, where each thread's outputs lie, how tiles travel from global
memory through registers into shared memory, and how the outputs are written. What a thread does
with the tiles in shared memory (the outer product, lesson 10) is in ``outer.py``.

The layout, in short (each choice leaves the arithmetic alone; how it was found and what it
gained on the H200 is in ``benchmarks/RESULTS.md``, "Layout of the register-blocked rungs"):

- the A tile is stored transposed, ``As[k, m]``, with rows padded by ``A_ROW_PAD``, so a thread's
  TM values for one k are contiguous like its TN values of ``Bs[k, n]``;
- a thread's rows (and columns) come in chunks of V = 4 consecutive indices (``row_of``,
  ``col_of``), so each chunk is one 128-bit shared load;
- warp tiling: the 32 lanes of a warp own a 4 (along M) x 8 (along N) patch of thread tiles
  (``coords``);
- global loads go through registers (``fetch_*``) before shared memory (``stash_*``), in runs of
  up to 4 consecutive elements of a row; a block wholly inside the matrices (``inside``) skips
  the bounds checks, and indices are unsigned.

Device functions are inlined (``forceinline`` on the GPU) so that the small local arrays stay in
registers.
"""
from functools import lru_cache
from types import SimpleNamespace

from numba import float32, uint64

from .. import device
from ._common import FLOAT32_BYTES, Plan, is_power_of_two, require, warp_tiled

cuda = device.cuda()   # a module global: the simulator swaps it for its fake module

PARAMS = ("BM", "BN", "BK", "TM", "TN")
A_ROW_PAD = 4     # floats added to each row of the transposed A tile
# Byte alignment of the shared tiles (16 allows 128-bit loads); the simulator accepts only None.
ALIGN = None if device.backend() == "sim" else 16
# Device functions are inlined on the GPU so that small local arrays stay in registers.
INLINE = {} if device.backend() == "sim" else {"forceinline": True}


def chunk(t):
    """Consecutive indices a thread owns along a side of TM (or TN) outputs: 4, 2 or 1."""
    return 4 if t % 4 == 0 else 2 if t % 2 == 0 else 1


def run(per_thread, row):
    """Length of the runs of consecutive elements a thread loads: 4, 2 or 1, dividing both its
    share of the tile and the tile's row."""
    return next(v for v in (4, 2, 1) if per_thread % v == 0 and row % v == 0)


def plan(rung, stages, BM, BN, BK, TM, TN, bk_multiple=1):
    """Validate the tile constants of a register-blocked rung and return its launch plan
    (``stages`` shared buffers; BK a multiple of ``bk_multiple`` when k-steps go in groups)."""
    given = f"BM={BM}, BN={BN}, BK={BK}, TM={TM}, TN={TN}"
    require(min(BM, BN, BK, TM, TN) >= 1, f"{rung}: every tile constant must be >= 1, got {given}")
    require(BM % TM == 0 and BN % TN == 0,
            f"{rung}: the thread tile must divide the block tile (BM % TM == 0 and BN % TN == 0), "
            f"got {given}")
    multiple = "even" if bk_multiple == 2 else f"a multiple of {bk_multiple}"
    require(BK % bk_multiple == 0,
            f"{rung}: BK must be {multiple} (k-steps go in groups of {bk_multiple}), got {given}")
    threads = (BM // TM) * (BN // TN)
    require(is_power_of_two(BN // TN),
            f"{rung}: BN/TN (threads along a row of the block) must be a power of two, got "
            f"{BN // TN} from {given}")
    require((BM * BK) % threads == 0 and (BK * BN) % threads == 0,
            f"{rung}: the {threads} threads must share the A tile (BM*BK = {BM * BK}) and the "
            f"B tile (BK*BN = {BK * BN}) evenly, got {given}")
    smem = stages * BK * ((BM + A_ROW_PAD) + BN) * FLOAT32_BYTES
    return Plan(block=(threads, 1), tile_m=BM, tile_n=BN, smem_bytes=smem)


def fetcher(ROWS, COLS, L, V, NT):
    """Global -> registers for one operand: each of NT threads loads L elements of the ROWS x COLS
    tile at (r0, c0), in runs of V consecutive columns (one row address per run), zeros outside."""
    RUNS = COLS // V                # runs per tile row

    @cuda.jit(device=True, **INLINE)
    def fetch(X, r0, c0, tid, regs):
        R = X.shape[0]
        CN = X.shape[1]
        inside = r0 + ROWS <= R and c0 + COLS <= CN     # the same answer for the whole block
        for l in range(L):
            q = tid + (l // V) * NT
            r = r0 + q // RUNS
            c = c0 + (q % RUNS) * V + l % V
            if inside or (r < R and c < CN):
                regs[l] = X[uint64(r), uint64(c)]
            else:
                regs[l] = float32(0)

    return fetch


@lru_cache(maxsize=None)
def device_functions(BM, BN, BK, TM, TN):
    """Inlined device functions for one set of tile constants, and the constants themselves."""
    NTX = BN // TN                  # threads along N (a power of two)
    NTY = BM // TM                  # threads along M
    NT = NTX * NTY
    LA = BM * BK // NT              # elements of the A tile each thread moves
    LB = BK * BN // NT
    VM = chunk(TM)
    VN = chunk(TN)
    VA = run(LA, BK)                # consecutive elements per global-load run
    VB = run(LB, BN)
    CA = BK // VA                   # runs per row of the A tile
    CB = BN // VB

    WARP_TILE = warp_tiled(NTX, NTY)
    WXN = max(NTX // 8, 1)          # warps along N

    @cuda.jit(device=True, **INLINE)
    def coords(tid):
        """(ty, tx): this thread's place in the NTY x NTX grid of thread tiles."""
        if WARP_TILE:
            lane = tid & 31
            warp = tid >> 5
            return (warp // WXN) * 4 + (lane >> 3), (warp & (WXN - 1)) * 8 + (lane & 7)
        return tid // NTX, tid & (NTX - 1)

    @cuda.jit(device=True, **INLINE)
    def row_of(i, ty):
        """Row, within the block tile, of this thread's i-th row of outputs: chunks of VM
        consecutive rows, one chunk per NTY * VM rows."""
        return (i // VM) * (VM * NTY) + ty * VM + i % VM

    @cuda.jit(device=True, **INLINE)
    def col_of(j, tx):
        """Column, within the block tile, of this thread's j-th column of outputs."""
        return (j // VN) * (VN * NTX) + tx * VN + j % VN

    fetch_a = fetcher(BM, BK, LA, VA, NT)   # A tile at (m0, k0), in runs along k
    fetch_b = fetcher(BK, BN, LB, VB, NT)   # B tile at (k0, n0), in runs along n

    @cuda.jit(device=True, **INLINE)
    def stash_a(As, s, tid, ra):
        """Registers -> shared buffer s, transposed: As[s, k, m]."""
        for l in range(LA):
            q = tid + (l // VA) * NT
            As[s, (q % CA) * VA + l % VA, q // CA] = ra[l]

    @cuda.jit(device=True, **INLINE)
    def stash_b(Bs, s, tid, rb):
        """Registers -> shared buffer s: Bs[s, k, n]."""
        for l in range(LB):
            q = tid + (l // VB) * NT
            Bs[s, q // CB, (q % CB) * VB + l % VB] = rb[l]

    @cuda.jit(device=True, **INLINE)
    def write_c(C_in, C_out, alpha, beta, acc, m0, n0, ty, tx):
        """C_out = alpha acc + beta C_in for this thread's outputs inside the matrix."""
        M = C_out.shape[0]
        N = C_out.shape[1]
        for i in range(TM):
            r = m0 + row_of(i, ty)
            if r < M:
                for j in range(TN):
                    c = n0 + col_of(j, tx)
                    if c < N:
                        out = alpha * acc[i, j]
                        if beta != 0:
                            out += beta * C_in[r, c]
                        C_out[r, c] = out

    return SimpleNamespace(
        coords=coords, row_of=row_of, col_of=col_of, LA=LA, LB=LB, VA=VA, VB=VB, NT=NT,
        BMP=BM + A_ROW_PAD,
        fetch_a=fetch_a, fetch_b=fetch_b, stash_a=stash_a, stash_b=stash_b, write_c=write_c)
