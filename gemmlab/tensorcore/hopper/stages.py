"""The Hopper ladder's steps, tile shapes and launch plans, and the rule that picks a plan for a
problem's shape. Plain Python: tested on any machine.

A *stage* is one step of the ladder (one kernel). A *shape* is how a kernel cuts C into tiles:
``wide`` 128 x 256 tiles (two consumer warpgroups split a tile's rows), ``narrow`` 128 x 128,
``slim`` 128 x 64, ``pingpong`` 128 x 128 tiles that each consumer warpgroup owns whole,
alternating with the other, and the decode shapes ``decode256``, ``decode128``, ``decode64``:
64-row tiles that one consumer warpgroup computes, for problems with few rows (an LLM's tokens),
where a 128-row tile's A would be mostly zero padding; half the A bytes per slice leave room in
shared memory for more slices of B in flight. The persistent stage picks its shape with
``tile_m`` and ``tile_n``. The persistent kernels take two more options: ``split_k`` (several
blocks share one tile's K range; the last to finish adds the partial sums) and ``out`` (FP32 or
the inputs' 16-bit format). ``epilogue="staged"`` (128 x 256 tiles, 16-bit output: the
``wide_staged`` shape) hands each finished tile to the producer warpgroup's idle warps through a
staging buffer in shared memory, so the consumers' MMAs on the next tile overlap its stores to C;
the buffer costs one slice of the ring (3 instead of 4). ``cluster=2`` (the 128 x 256 tiles,
K not split: the ``wide_c2`` and ``wide_staged_c2`` shapes) runs the blocks in
clusters of two that compute two tiles one above the other: they need the same slices of B, so
each block copies half of B's boxes and the TMA writes them into both blocks' shared memory
(multicast), and each slice of B crosses from L2 once instead of twice.

The FP8 rung (``fmt="e4m3"``) is the persistent and ping-pong kernels with E4M3 inputs: a K slice
is 128 values (still one 128-byte swizzled row), B is loaded transposed (N x K, K-major: FP8 wgmma
reads both operands that way) in one box per slice, and the output is FP32, BF16 or FP16. FP8 wgmma
adds with fewer bits than FP32; ``promote=True`` (128 x 128 and 128 x 64 tiles) sums each slice
in the Tensor Core and the running total in FP32 registers, as cuBLASLt does by default.
"""
from dataclasses import dataclass

import numpy as np

from .. import operands

BM, BK = 128, 64                     # output rows per tile (but decode's); K slice per stage
B_BOX = 64                           # columns of B per TMA box (a 128-byte swizzled row)
ELEM_BYTES = 2                       # FP16 / BF16
ALIGN_ELEMS = operands.ROW_ELEMS     # 16-byte row strides for the TMA
FP8 = operands.FP8                   # the FP8 rung's input format, "e4m3"
FP8_BK = 128                         # its K slice: 128 one-byte values, a 128-byte row
FP8_ALIGN = 16                       # 16-byte rows of one-byte values
FP8_OUTPUTS = ("fp32", "bf16", "fp16")
GROUP_M = 8                          # tile rows walked together by the persistent kernels (L2)
FORMATS = {"fp16": 6, "bf16": 9}     # -> CUtensorMapDataType (FLOAT16, BFLOAT16)
MAP_TYPES = {**FORMATS, FP8: 0}      # ... and UINT8 for the FP8 bytes
OUTPUTS = ("fp32", "fp16", "bf16")   # 16-bit outputs: the inputs' own format only
SMEM_PER_BLOCK = 227 * 1024          # what an sm_90 block may opt in to
OUT16_BYTES, STAGING_PAD = 2, 16     # the staged epilogue: 16-bit C, bytes of padding per row
EPILOGUES = ("direct", "staged")     # C from registers, or through shared memory (staged)


def slice_depth(fmt):
    """Values of K per slice: 64 16-bit values or 128 FP8 ones (one 128-byte row either way)."""
    return FP8_BK if fmt == FP8 else BK


def padded_k(K, fmt):
    """K rounded up to whole 16-byte rows of the format's values, as the TMA needs."""
    return operands.round_up(K, FP8_ALIGN if fmt == FP8 else ALIGN_ELEMS)


@dataclass(frozen=True)
class Shape:
    """How a kernel tiles C: ``bm`` x ``bn`` output tiles, ``buffers`` K slices in the
    shared-memory ring, ``pingpong``: each consumer warpgroup owns whole tiles, ``staged``: the
    staged epilogue (16-bit output through shared memory), ``cluster``: blocks per cluster, which
    compute that many consecutive tile rows of one tile column and share their slices of B (each
    copies its part and the TMA multicasts it to all)."""
    name: str
    bn: int
    buffers: int
    pingpong: bool = False
    bm: int = BM
    staged: bool = False
    cluster: int = 1

    @property
    def staging_bytes(self):
        """The staged epilogue's buffer: the whole 16-bit tile, each row padded by 16 bytes so
        that a warp's packed pairs fall on 32 different banks (hopper_gemm.cu's STAGING_BYTES)."""
        return self.bm * (self.bn * OUT16_BYTES + STAGING_PAD) if self.staged else 0

    @property
    def stage_bytes(self):
        """Bytes of A and B tiles that one K slice moves into shared memory (FP8 the same: half
        the bytes per value, twice the values per slice)."""
        return (self.bm * BK + BK * self.bn) * ELEM_BYTES

    @property
    def parts(self):
        """Consumer warpgroups sharing one tile, 64 rows each (hopper_gemm.cu's ``PARTS``)."""
        return 1 if self.pingpong else self.bm // 64

    def tiles(self, M, N):
        return ceil_div(M, self.bm), ceil_div(N, self.bn)


# The rings hold 192 KiB of the 128-row tiles and as many buffers of the 64-row ones as fit in
# SMEM_PER_BLOCK (tests/test_tensorcore_hopper.py checks both): a decode problem is memory-bound.
SHAPES = {"wide": Shape("wide", 256, 4), "narrow": Shape("narrow", 128, 6),
          "slim": Shape("slim", 64, 8), "pingpong": Shape("pingpong", 128, 6, pingpong=True),
          "decode256": Shape("decode256", 256, 5, bm=64),
          "decode128": Shape("decode128", 128, 9, bm=64),
          "decode64": Shape("decode64", 64, 14, bm=64),
          "wide_staged": Shape("wide_staged", 256, 3, staged=True),
          "wide_c2": Shape("wide_c2", 256, 4, cluster=2),
          "wide_staged_c2": Shape("wide_staged_c2", 256, 3, staged=True, cluster=2)}
# the persistent stage's shapes by its options (tile_m, tile_n), with the direct epilogue
TILES = {(s.bm, s.bn): name for name, s in SHAPES.items()
         if not (s.pingpong or s.staged or s.cluster > 1)}
CLUSTERS = (1, 2)                    # blocks per cluster: 2 for the 128 x 256 tiles


@dataclass(frozen=True)
class Stage:
    name: str
    threads: int                     # per block
    uses_tma: bool
    specialised: bool                # a producer warpgroup beside two consumers
    persistent: bool
    adds: str                        # what this step changes, for tables and the lesson
    shape: Shape = SHAPES["wide"]
    single_buffer: bool = False      # the plain-copy step has one buffer, not a ring

    @property
    def buffers(self):
        return 1 if self.single_buffer else self.shape.buffers

    @property
    def stage_bytes(self):
        return self.shape.stage_bytes

    @property
    def smem_bytes(self):
        return smem_bytes(self, self.shape)


def smem_bytes(stage, shape):
    """Dynamic shared memory per block: the buffers, their mbarriers (8 bytes each: "full" per
    buffer, and "empty" too when warps are specialised), the specialised kernels' two "turn"
    mbarriers and two split-K flags (24 bytes), 1 KiB for alignment; a staged shape adds its
    staging buffer, its "staged" and "drained" mbarriers and two "stores" flags (24 bytes)."""
    buffers = 1 if stage.single_buffer else shape.buffers
    barriers = (1 + stage.specialised) * buffers * 8 if stage.uses_tma else 0
    staging = shape.staging_bytes + 24 * shape.staged
    return buffers * shape.stage_bytes + barriers + 24 * stage.specialised + staging + 1024


STAGES = {
    "wgmma": Stage("wgmma", 256, False, False, False,
                   "wgmma from shared memory, tiles copied with ordinary loads and stores",
                   single_buffer=True),
    "tma": Stage("tma", 256, True, False, False,
                 f"TMA copies into a ring of {SHAPES['wide'].buffers} buffers, one mbarrier each"),
    "ws": Stage("ws", 384, True, True, False,
                "a producer warpgroup copies, two consumer warpgroups compute"),
    "persistent": Stage("persistent", 384, True, True, True,
                        f"one block per SM over many tiles (groups of {GROUP_M} tile rows)"),
    "pingpong": Stage("pingpong", 384, True, True, True,
                      "each consumer warpgroup owns whole 128 x 128 tiles, alternating with the "
                      "other: one stores C while the other computes", SHAPES["pingpong"]),
}
PIPELINE_STAGES = SHAPES["wide"].buffers
AUTO = "auto"                        # stage=AUTO: the rule of :func:`choose` picks the plan


def get_stage(name):
    if name not in STAGES:
        raise ValueError(f"unknown Hopper stage {name!r}; the stages are {', '.join(STAGES)} "
                         f"(or {AUTO!r})")
    return STAGES[name]


def ceil_div(a, b):
    return -(-a // b)


def tile_coords(t, tiles_m, tiles_n, group_m=GROUP_M):
    """(tile row, tile column) of the t-th tile in the persistent kernels' grouped order: the
    same formula as ``tile_coords`` in hopper_gemm.cu (tested against each other through the
    kernel's output on a GPU, and for covering every tile once here)."""
    per_group = group_m * tiles_n
    first_m = (t // per_group) * group_m
    rows = min(tiles_m - first_m, group_m)
    return first_m + (t % per_group) % rows, (t % per_group) // rows


def split_range(split, splits, k_slices):
    """K slices [k0, k1) of split ``split`` of ``splits``: as hopper_gemm.cu's ``unit_at``."""
    return split * k_slices // splits, (split + 1) * k_slices // splits


@dataclass(frozen=True)
class Plan:
    """How one stage runs an M x N x K problem: tiles, padding, grid, shared memory, split-K."""
    stage: Stage
    shape: Shape
    M: int
    N: int
    K: int
    Np: int                          # N and K padded to multiples of 8
    Kp: int
    sms: int                         # SMs on the device (the persistent grid)
    split_k: int = 1
    out: str = "fp32"
    fmt: str = "fp16"                # the inputs' format: fp16, bf16 or e4m3 (the FP8 rung)
    promote: bool = False            # FP8: each slice's sums added in FP32 (see the module)

    @property
    def bk(self):
        return slice_depth(self.fmt)

    @property
    def padded(self):
        return (self.Np, self.Kp) != (self.N, self.K)

    @property
    def tiles(self):
        return self.shape.tiles(self.M, self.N)

    @property
    def units(self):
        """Units of work: every (tile, split) pair."""
        tiles_m, tiles_n = self.tiles
        return tiles_m * tiles_n * self.split_k

    @property
    def grid(self):
        tiles_m, tiles_n = self.tiles
        c = self.shape.cluster          # whole clusters, each walking units of c tile rows
        if self.stage.persistent:
            return (c * max(1, min(self.sms // c, ceil_div(tiles_m, c) * tiles_n * self.split_k)),
                    1, 1)
        return (tiles_n, tiles_m, 1)

    @property
    def k_slices(self):
        return ceil_div(self.Kp, self.bk)

    @property
    def smem_bytes(self):
        return smem_bytes(self.stage, self.shape)

    @property
    def kernel(self):
        """The kernel's name without its format suffix (hopper_gemm.cu's entry points)."""
        if not self.stage.persistent:
            return f"hopper_{self.stage.name}"
        base = {"wide": "hopper_persistent", "narrow": "hopper_persistent_n128",
                "slim": "hopper_persistent_n64", "pingpong": "hopper_pingpong",
                "decode256": "hopper_persistent_m64", "decode128": "hopper_persistent_m64_n128",
                "decode64": "hopper_persistent_m64_n64",
                "wide_staged": "hopper_persistent_staged", "wide_c2": "hopper_persistent_c2",
                "wide_staged_c2": "hopper_persistent_staged_c2"}[self.shape.name]
        out = {"fp32": "", "fp16": "_ofp16" if self.fmt == FP8 else "_o16", "bf16": "_o16"}[self.out]
        return base + ("_promoted" if self.promote else "") + out

    @property
    def partial_floats(self):
        """FP32 partial sums the split-K kernels park in device memory (0 without split-K)."""
        return 0 if self.split_k == 1 else self.units * self.shape.bm * self.shape.bn

    @property
    def counters(self):
        """Arrival counters of split-K: one per tile and consumer warpgroup sharing it."""
        tiles_m, tiles_n = self.tiles
        return 0 if self.split_k == 1 else tiles_m * tiles_n * self.shape.parts

    def tensor_maps(self):
        """cuTensorMapEncodeTiled arguments (dims innermost first, byte strides, box) for A
        (M x Kp, K-major, one box of bm rows) and B (Kp x Np, N-major; FP8: N x Kp, K-major, one
        box of bn rows, or in a cluster bn / cluster rows, one box per block), all with the
        128-byte swizzle."""
        bm = self.shape.bm
        if self.fmt == FP8:
            return {"A": {"dims": (self.Kp, self.M), "strides": (self.Kp,), "box": (FP8_BK, bm)},
                    "B": {"dims": (self.Kp, self.N), "strides": (self.Kp,),
                          "box": (FP8_BK, self.shape.bn // self.shape.cluster)}}
        return {"A": {"dims": (self.Kp, self.M), "strides": (self.Kp * ELEM_BYTES,),
                      "box": (BK, bm)},
                "B": {"dims": (self.Np, self.Kp), "strides": (self.Np * ELEM_BYTES,),
                      "box": (B_BOX, BK)}}

    @property
    def epilogue(self):
        return "staged" if self.shape.staged else "direct"

    def describe(self):
        extra = [f"{self.shape.bm}x{self.shape.bn} tiles"]
        if self.split_k > 1:
            extra.append(f"split_k={self.split_k}")
        if self.out != "fp32":
            extra.append(f"{self.out} out")
        if self.fmt == FP8:
            extra.append("E4M3 in" + (", FP32-promoted sums" if self.promote else ""))
        if self.shape.staged:
            extra.append("staged epilogue")
        if self.shape.cluster > 1:
            extra.append(f"clusters of {self.shape.cluster}, B multicast")
        return f"{self.stage.name} ({', '.join(extra)})"


def _whole(name, value, minimum=0):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        kind = "non-negative" if minimum == 0 else f">= {minimum}"
        raise ValueError(f"{name} must be a {kind} whole number, got {value!r}")
    return int(value)


def plan(stage, M, N, K, sms=132, tile_n=None, split_k=1, out="fp32", fmt="fp16", promote=False,
         tile_m=None, epilogue="direct", cluster=1):
    """The :class:`Plan` of ``stage`` for an M x N x K problem (``sms``: the device's SMs).
    ``tile_m`` (persistent: 128, or 64 for the decode shapes), ``tile_n`` (persistent: 256, 128 or
    64), ``split_k`` and ``out`` are the persistent kernels' options; ``stage="auto"`` lets
    :func:`choose` set tile_m, tile_n, split_k and the epilogue. ``fmt`` "e4m3": the FP8 rung
    (persistent and pingpong only; out FP32, BF16 or FP16; ``promote``: FP32 running sums,
    128 x 128 or 128 x 64 tiles of the persistent stage). ``epilogue="staged"``: the persistent
    stage's 128 x 256 tiles with 16-bit output, stored through shared memory (see the module).
    ``cluster=2``: the persistent stage's 128 x 256 tiles in clusters of two blocks that share
    B's slices (K not split, not promoted; see the module)."""
    M, N, K = (_whole(n, v) for n, v in (("M", M), ("N", N), ("K", K)))
    sms = _whole("sms", sms, 1)
    if fmt not in MAP_TYPES:
        raise ValueError(f"input format {fmt!r} is not supported; use one of {', '.join(MAP_TYPES)}")
    if stage in (None, AUTO):
        if tile_m is not None:
            raise ValueError(f"tile_m={tile_m!r}: stage='auto' picks its own tiles; ask for "
                             f"stage='persistent' to choose the rows")
        for option, value, default in (("epilogue", epilogue, "direct"), ("cluster", cluster, 1)):
            if value != default:
                raise ValueError(f"{option}={value!r}: stage='auto' picks its own plan; ask for "
                                 f"stage='persistent' to choose the {option}")
        picked = choose(M, N, K, sms, fmt, promote, out)
        stage, tile_n, split_k = picked["stage"], picked["tile_n"], picked["split_k"]
        tile_m, epilogue, cluster = picked["tile_m"], picked["epilogue"], picked["cluster"]
    st = get_stage(stage)
    split_k = _whole("split_k", split_k, 1)
    if out not in OUTPUTS:
        raise ValueError(f"out must be one of {', '.join(OUTPUTS)}, got {out!r}")
    if not st.persistent and (split_k != 1 or out != "fp32" or tile_n is not None
                              or tile_m is not None or epilogue != "direct" or cluster != 1):
        raise ValueError(f"stage {st.name!r} takes no options (tile_m, tile_n, split_k, out, "
                         f"epilogue, cluster are the persistent stages' options)")
    if tile_n is not None and (st.name != "persistent" or tile_n not in (256, 128, 64)):
        raise ValueError(f"tile_n={tile_n!r}: the persistent stage takes 256, 128 or 64 "
                         f"(pingpong's tiles are 128 wide)")
    if tile_m is not None and (st.name != "persistent" or tile_m not in (BM, 64)):
        raise ValueError(f"tile_m={tile_m!r}: the persistent stage takes 128 or 64 (pingpong's "
                         f"tiles are 128 rows: each consumer warpgroup owns whole tiles)")
    shape = st.shape
    if st.name == "persistent":
        shape = SHAPES[TILES[tile_m or shape.bm, tile_n or shape.bn]]
    if fmt == FP8:
        if not st.persistent:
            raise ValueError(f"stage {st.name!r} has no FP8 build: the FP8 rung is the persistent "
                             f"and pingpong kernels")
        if out not in FP8_OUTPUTS:
            raise ValueError(f"out={out!r}: FP8 inputs give FP32, BF16 or FP16 output")
    if epilogue not in EPILOGUES:
        raise ValueError(f"epilogue must be one of {', '.join(EPILOGUES)}, got {epilogue!r}")
    if epilogue == "staged":
        if st.name != "persistent" or (shape.bm, shape.bn) != (BM, 256):
            raise ValueError(f"epilogue='staged' is built for the persistent stage's 128 x 256 "
                             f"tiles only, not for {st.name!r} with {shape.bm} x {shape.bn} tiles")
        if out == "fp32":
            raise ValueError("epilogue='staged' needs 16-bit output (out='fp16' or 'bf16'): an "
                             "FP32 128 x 256 tile (128 KiB) does not fit in shared memory beside "
                             "the ring")
        shape = SHAPES["wide_staged"]
    if cluster not in CLUSTERS:
        raise ValueError(f"cluster must be one of {', '.join(map(str, CLUSTERS))}, got {cluster!r}")
    if cluster > 1:
        if st.name != "persistent" or (shape.bm, shape.bn) != (BM, 256) or split_k != 1 \
                or promote:
            raise ValueError(f"cluster={cluster} is built for the persistent stage's 128 x 256 "
                             f"tiles with K not split and the Tensor Core's own sums, not for "
                             f"{st.name!r} with {shape.bm} x {shape.bn} tiles, split_k={split_k}"
                             + (", promote=True" if promote else ""))
        shape = SHAPES["wide_staged_c2" if shape.staged else "wide_c2"]
    if promote:
        if fmt != FP8 or st.name != "persistent" or shape.bn not in (128, 64) or shape.bm != BM:
            raise ValueError("promote=True is the FP8 persistent kernels' option, with 128 x 128 "
                             "or 128 x 64 tiles (twice the accumulators do not fit 128 x 256 "
                             "tiles; the 64-row tiles are built without it)")
    bk, Kp = slice_depth(fmt), padded_k(K, fmt)
    Np = N if fmt == FP8 else operands.round_up(N, ALIGN_ELEMS)     # FP8's B rows are N x Kp
    if split_k > max(1, ceil_div(Kp, bk)):
        raise ValueError(f"split_k={split_k} leaves splits without work: K={K} is "
                         f"{ceil_div(Kp, bk)} slice(s) of {bk}")
    return Plan(st, shape, M, N, K, Np, Kp, sms, split_k, out, fmt, bool(promote))


# ---- the rule --------------------------------------------------------------------------------

MIN_SPLIT_SLICES = 32    # split K only while each split keeps 32 slices (K = 2048) or more
LONG_SPLIT_SLICES = 64   # ... and wider tiles than 128 x 64 only while it keeps 64 (K = 4096)
FULL_WAVE = 31 / 32      # blocks on at least this share of the SMs fill them (128 of 132)


def _split_ways(tiles, k_slices, sms, min_slices):
    """As many K splits as fit on the SMs beside ``tiles`` tiles, each keeping ``min_slices``."""
    return max(1, min(sms // max(tiles, 1), k_slices // min_slices))


def choose(M, N, K, sms=132, fmt="fp16", promote=False, out="fp32"):
    """The plan a problem's shape calls for, and why: a dict with stage, tile_m, tile_n, split_k,
    epilogue, cluster and reason.

    1. The widest tiles (128 x 256, else 128 x 128, else 128 x 64) that fill the SMs, splitting
       K if there are fewer tiles than SMs while each split keeps 64 slices (K = 4096): wide
       tiles read the fewest bytes per FLOP, a full wave keeps every SM busy, and a split costs
       a round trip of FP32 partial sums through global memory that only long splits repay.
       "Fill" allows a few idle SMs (31/32 of them busy): 128 tiles of 128 x 256 on 132 SMs
       beat 256 tiles of 128 x 128 in two waves. The 128 x 256 tiles with 16-bit output take
       the staged epilogue where a block has more than one tile to compute: their stores then
       overlap the next tile's MMAs (in a single wave there is no next tile, and the staging
       buffer's price, one slice fewer in the ring, is all that is left). Unsplit 128 x 256 tiles
       run in clusters of two blocks that share B's slices (multicast).
    2. Nothing fills the SMs that way (few rows, or a small problem): the 64 x 64 tiles if
       they fill the SMs unsplit, else the 128 x 64 tiles with K split as many ways as fit on
       the SMs while each split keeps 32 slices (K = 2048); shorter splits spend more on adding
       partial sums than they save.
    3. Before both: at most 64 rows (decoding a batch of up to 64 tokens) take the 64 x 64
       tiles, K split as in 2 (the 64-row tiles are built without FP8's promoted sums). A
       128-row tile would hold 64 or more rows of zeros, and half-height tiles leave room for 14
       slices of B in flight instead of 8.

    Measured on an H100, four sequential runs of benchmarks/library_gpu.py (RESULTS.md), % of
    the best library, staged against direct: 83.6-85.7 against 76.4-78.6 at 8192 x 4096 x 1024,
    88.2-88.9 against 82.1-86.9 at 4096^3, 91.7-95.3 against 90.5-94.2 at 4096 x 11008 x 4096,
    81.8-97.5 against 89.4-98.8 at 8192^3 (the H100's speed wanders over long runs), and at
    2048^3, one wave, 84.8-86.0 against 87.6-89.5. 64 x 64 tiles: 93.3-97.8 at
    128 x 4096 x 4096 (128 x 64 tiles split 2 ways: 86.5-90.9), and 95-97 at 16 and
    64 x 8192 x 8192 in FP16 and FP8 (the best 128-row plan: 87-88).

    Clusters, measured on an H100 in one run of interleaved flushed timings against
    cupy.matmul (RESULTS.md): 91.5 -> 94.7% at 4096^3, 93.1 -> 98.1% at 8192^3 (staged), 94.1 ->
    99.1% at 4096 x 11008 x 4096 (staged), 89.9 -> 93.7% at 2048^3, 89.5 -> 93.4% at
    8192 x 4096 x 1024 (staged); FP8 (fast sums) 89.2 -> 92.4% and 92.6 -> 98.5% of
    _scaled_mm at 4096^3 and 8192^3.

    FP8's slices are twice as deep, so those limits are 32 and 16 of its slices. Measured on
    the H200 (benchmarks/RESULTS.md): ping-pong ties with the wide persistent tiles at the
    short-K shape once the output is 16-bit, so the rule does not pick it.
    """
    k_slices = ceil_div(padded_k(K, fmt), slice_depth(fmt))
    long_slices, min_slices = (n * BK // slice_depth(fmt) for n in (LONG_SPLIT_SLICES,
                                                                   MIN_SPLIT_SLICES))
    if M <= 64 and not promote:                         # decode: the 64-row tiles (3.)
        return _narrowest(SHAPES["decode64"], M, N, k_slices, sms, min_slices)
    for name in ("narrow", "slim") if promote else ("wide", "narrow", "slim"):
        tiles_m, tiles_n = SHAPES[name].tiles(M, N)
        tiles = tiles_m * tiles_n
        split = _split_ways(tiles, k_slices, sms, long_slices)
        if tiles * split >= FULL_WAVE * sms:
            bn = SHAPES[name].bn
            staged = bn == 256 and out != "fp32" and tiles * split > sms
            cluster = 2 if bn == 256 and split == 1 else 1
            how = f", K split {split} ways: {tiles * split} blocks," if split > 1 else ""
            return {"stage": "persistent", "tile_m": BM, "tile_n": bn, "split_k": split,
                    "epilogue": "staged" if staged else "direct", "cluster": cluster,
                    "reason": f"{tiles} tiles of 128 x {bn}{how} fill the {sms} SMs"
                              + (", stored through shared memory" if staged else "")
                              + (", in clusters of two sharing B" if cluster > 1 else "")}
    tiles_m, tiles_n = SHAPES["decode64"].tiles(M, N)
    if not promote and tiles_m * tiles_n >= FULL_WAVE * sms:
        return _narrowest(SHAPES["decode64"], M, N, k_slices, sms, min_slices)
    return _narrowest(SHAPES["slim"], M, N, k_slices, sms, min_slices)


def _narrowest(shape, M, N, k_slices, sms, min_slices):
    """The 64-column tiles of ``shape``, K split as many ways as fit beside them on the SMs."""
    tiles_m, tiles_n = shape.tiles(M, N)
    tiles = max(tiles_m * tiles_n, 1)
    split = _split_ways(tiles, k_slices, sms, min_slices)
    return {"stage": "persistent", "tile_m": shape.bm, "tile_n": shape.bn, "split_k": split,
            "epilogue": "direct", "cluster": 1,
            "reason": f"{tiles} tiles of {shape.bm} x {shape.bn} for {sms} SMs: K split {split} "
                      f"way(s) -> {tiles * split} blocks"}
