"""Rung 6, ``unrolled``: ``twolevel``'s data flow, written so that the compiler has nothing left
to guess (lesson 11, last step).

The changes to ``twolevel``, each found by reading the PTX and SASS that numba-cuda emits (none
of them changes the arithmetic; what each one bought on the H200 is in ``benchmarks/RESULTS.md``
and lesson 11):

1. **The k loop is written out** (``unroll``). NVVM leaves the k loop of a K-tile rolled (its
   body is too large for its heuristics), so every step paid a loop counter, a compare, a
   branch and address arithmetic, and the register ping-pong had to be spelled out by hand.
   Composing device functions in Python writes the BK steps out one after the other: k is a
   constant in every step, each shared-memory read is one 128-bit load at a fixed offset, and
   the compiler schedules the reads of later steps under the FMAs of earlier ones by itself,
   which is what the register ping-pong did by hand.
2. **Blocks wholly inside take a loop of their own** (``fast_path``): when the block's rows and
   columns lie inside C and K is a multiple of BK, every tile it loads lies inside A and B, so
   its K loop loads without a bounds check or a per-tile test. The other blocks take the
   checked loop of ``_blocked``.
3. **128-bit global loads** (``VW = 4``): numba-cuda reads a float32 array one element at a
   time; in the unchecked loop ``_vector.load4`` reads four consecutive floats of a row with one
   instruction, when the rows of A and B are 16-byte aligned (``_vector.aligned16``).
4. **Two blocks per SM** (``MINB = 2``): launch bounds ask the compiler to fit two blocks of
   256 threads on an SM, at most 128 registers per thread. With the loop written out the BK = 8
   kernel fits without spilling, so 16 warps share an SM instead of ``twolevel``'s 8.
"""
from functools import lru_cache

from numba import float32, uint64

from .. import device
from . import _blocked, _vector, outer
from ._common import SIGNATURE, require

cuda = device.cuda()   # a module global: the simulator swaps it for its fake module

PARAMS = _blocked.PARAMS + ("VW", "MINB")
TILES = {"sim": {"BM": 16, "BN": 16, "BK": 4, "TM": 8, "TN": 8, "VW": 4, "MINB": 1},
         "gpu": {"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8, "VW": 4, "MINB": 2}}
INLINE = _blocked.INLINE


def plan(BM, BN, BK, TM, TN, VW, MINB):
    plan = _blocked.plan("unrolled", 2, BM, BN, BK, TM, TN)
    given = f"BM={BM}, BN={BN}, BK={BK}, TM={TM}, TN={TN}, VW={VW}"
    require(VW in (1, 4), f"unrolled: VW (floats per global load) must be 1 or 4, got {given}")
    g = _blocked.device_functions(BM, BN, BK, TM, TN)
    require(VW == 1 or (g.VA == 4 and g.VB == 4),
            f"unrolled: VW=4 needs every thread to load runs of 4 consecutive floats of A and B "
            f"(BK and BN multiples of 4, BM*BK and BK*BN at least 4 per thread), got {given}")
    require(MINB >= 1, f"unrolled: MINB (blocks per SM asked of the compiler) must be >= 1, "
                       f"got MINB={MINB}")
    return plan


def unroll(step, n):
    """A device function that runs ``step(..., k)`` for k = k0, k0 + 1, ..., k0 + n - 1, written
    out one after the other: two halves, each written out the same way, down to single steps."""
    if n == 1:
        return step
    first, second = unroll(step, n // 2), unroll(step, n - n // 2)
    HALF = n // 2

    @cuda.jit(device=True, **INLINE)
    def steps(As, Bs, s, k0, ty, tx, acc):
        first(As, Bs, s, k0, ty, tx, acc)
        second(As, Bs, s, k0 + HALF, ty, tx, acc)

    return steps


def unchecked_fetcher(COLS, L, V, NT, VW):
    """Global -> registers for a tile that lies wholly inside X: the elements ``_blocked``'s checked
    fetch loads (runs of V consecutive floats of a row), with no bounds check. With VW = 4 each
    run is one 128-bit load, which needs X's rows to be 16-byte aligned."""
    RUNS = COLS // V                # runs per tile row

    @cuda.jit(device=True, **INLINE)
    def fetch(X, r0, c0, tid, regs):
        for l in range(0, L, VW):
            q = tid + (l // V) * NT
            r = uint64(r0 + q // RUNS)
            c = uint64(c0 + (q % RUNS) * V + l % V)
            if VW == 4:
                v = _vector.load4(X, r, c)
                regs[l] = v[0]
                regs[l + 1] = v[1]
                regs[l + 2] = v[2]
                regs[l + 3] = v[3]
            else:
                regs[l] = X[r, c]

    return fetch


@lru_cache(maxsize=None)
def kernel(BM, BN, BK, TM, TN, VW, MINB):
    """The compiled kernel (cached per tile constants)."""
    g = _blocked.device_functions(BM, BN, BK, TM, TN)
    coords, LA, LB, BMP, ALIGN = g.coords, g.LA, g.LB, g.BMP, _blocked.ALIGN
    stash_a, stash_b, write_c = g.stash_a, g.stash_b, g.write_c
    mk = outer.micro_kernel(BM, BN, BK, TM, TN)
    read_a, read_b, outer_update, clear = mk.read_a, mk.read_b, mk.outer_update, mk.clear
    # ---- step: k_step
    @cuda.jit(device=True, **INLINE)
    def k_step(As, Bs, s, k, ty, tx, acc):
        """One k: the fragments of A and B from shared buffer s, and their outer product."""
        a = cuda.local.array(TM, float32)
        b = cuda.local.array(TN, float32)
        read_a(As, s, k, ty, a)
        read_b(Bs, s, k, tx, b)
        outer_update(acc, a, b)

    k_steps = unroll(k_step, BK)    # all BK steps of a K-tile, written out
    # ---- end: k_step

    def pipeline(fetch_a, fetch_b):
        """The K loop, loading tiles with ``fetch_a`` and ``fetch_b``: the ping-pong of lesson 08
        around the written-out steps."""
        @cuda.jit(device=True, **INLINE)
        def k_tile(A, B, As, Bs, t, tiles, cur, m0, n0, tid, ty, tx, acc, ra, rb):
            """K-tile t from shared buffer ``cur`` (a constant per call site)."""
            more = t + 1 < tiles
            if more:
                fetch_a(A, m0, (t + 1) * BK, tid, ra)
                fetch_b(B, (t + 1) * BK, n0, tid, rb)
            k_steps(As, Bs, cur, 0, ty, tx, acc)
            if more:
                stash_a(As, 1 - cur, tid, ra)
                stash_b(Bs, 1 - cur, tid, rb)
            cuda.syncthreads()

        @cuda.jit(device=True, **INLINE)
        def k_loop(A, B, As, Bs, m0, n0, tid, ty, tx, acc, ra, rb):
            fetch_a(A, m0, 0, tid, ra)
            fetch_b(B, 0, n0, tid, rb)
            stash_a(As, 0, tid, ra)
            stash_b(Bs, 0, tid, rb)
            cuda.syncthreads()
            tiles = (A.shape[1] + BK - 1) // BK
            for t in range(0, tiles, 2):    # shared ping (buffer 0), then shared pong (buffer 1)
                k_tile(A, B, As, Bs, t, tiles, 0, m0, n0, tid, ty, tx, acc, ra, rb)
                if t + 1 < tiles:
                    k_tile(A, B, As, Bs, t + 1, tiles, 1, m0, n0, tid, ty, tx, acc, ra, rb)

        return k_loop

    checked_loop = pipeline(g.fetch_a, g.fetch_b)
    fast_loop = pipeline(unchecked_fetcher(BK, LA, g.VA, g.NT, VW),
                         unchecked_fetcher(BN, LB, g.VB, g.NT, VW))

    threads = (BM // TM) * (BN // TN)
    bounds = {} if device.backend() == "sim" or MINB == 1 else {"launch_bounds": (threads, MINB)}

    @cuda.jit(SIGNATURE, **bounds)
    def unrolled(A, B, C_in, C_out, alpha, beta):
        As = cuda.shared.array((2, BK, BMP), float32, alignment=ALIGN)
        Bs = cuda.shared.array((2, BK, BN), float32, alignment=ALIGN)
        acc = cuda.local.array((TM, TN), float32)
        ra = cuda.local.array(LA, float32)
        rb = cuda.local.array(LB, float32)
        tid = cuda.threadIdx.x
        ty, tx = coords(tid)
        m0 = cuda.blockIdx.y * BM
        n0 = cuda.blockIdx.x * BN
        clear(acc)
        # ---- step: fast_path
        inside = (m0 + BM <= A.shape[0] and n0 + BN <= B.shape[1]
                  and A.shape[1] % BK == 0)          # every tile of this block lies inside
        if inside and (VW == 1 or (_vector.aligned16(A) and _vector.aligned16(B))):
            fast_loop(A, B, As, Bs, m0, n0, tid, ty, tx, acc, ra, rb)
        else:
            checked_loop(A, B, As, Bs, m0, n0, tid, ty, tx, acc, ra, rb)
        # ---- end: fast_path
        write_c(C_in, C_out, alpha, beta, acc, m0, n0, ty, tx)

    return unrolled
