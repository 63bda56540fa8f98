"""How the Tensor Core GEMM is cut into pieces: block tiles, warp tiles and 16x16x16 fragments.

One :class:`Tiling` describes both the CUDA kernel (it is turned into C++ template arguments) and
the NumPy emulation (it drives the emulation's loops), so the two cannot drift apart. The three
levels are the lesson's hierarchy:

* a thread block computes a ``block_m x block_n`` tile of C, walking along K in steps of
  ``block_k`` with its A and B tiles in shared memory (``stages`` buffers: 2 is ping-pong);
* the block's ``warps_m x warps_n`` warps each own a ``warp_m x warp_n`` piece of that tile,
  held as ``frags_m x frags_n`` accumulator fragments of 16 x 16 that stay in registers across
  the whole K loop;
* one MMA step multiplies a 16 x 16 A fragment by a 16 x 16 B fragment into one accumulator
  fragment: D = A B + C, the Tensor Core's interface (m16n16k16 in WMMA).
"""
from dataclasses import dataclass

FRAG = 16            # WMMA m16n16k16: every fragment is 16 x 16, every MMA step covers 16 of K
WARP = 32            # threads per warp
VECTOR_ELEMS = 8     # 16-bit elements per 16-byte copy (cp.async / uint4)
SMEM_PAD = 8         # elements added to each shared-memory row (16 bytes) against bank conflicts
INPUT_BYTES = 2      # FP16 and BF16 inputs
MAX_REGISTERS = 255  # registers one thread may use on current NVIDIA GPUs


@dataclass(frozen=True)
class Tiling:
    """Tile sizes of one kernel configuration (all in elements)."""
    name: str
    block_m: int
    block_n: int
    block_k: int
    warps_m: int
    warps_n: int
    stages: int = 2                 # shared-memory buffers per operand: 2 = ping-pong
    fragment_prefetch: bool = True  # register double buffering of the A/B fragments
    min_blocks_per_sm: int = 1      # __launch_bounds__ hint: cap registers so this many blocks fit

    def __post_init__(self):
        def need(ok, what):
            if not ok:
                raise ValueError(f"tiling {self.name!r}: {what}")
        need(self.block_m % (self.warps_m * FRAG) == 0,
             f"block_m={self.block_m} must be a multiple of warps_m x 16 = {self.warps_m * FRAG}")
        need(self.block_n % (self.warps_n * FRAG) == 0,
             f"block_n={self.block_n} must be a multiple of warps_n x 16 = {self.warps_n * FRAG}")
        need(self.block_k % FRAG == 0, f"block_k={self.block_k} must be a multiple of 16")
        need(self.stages >= 2, f"stages={self.stages}: at least 2 buffers are needed to overlap")
        for operand, chunks in (("A", self.block_m * self.block_k), ("B", self.block_k * self.block_n)):
            need(chunks % (VECTOR_ELEMS * self.threads) == 0,
                 f"the {operand} tile ({chunks} elements) must split into 16-byte copies evenly "
                 f"over {self.threads} threads")

    @property
    def warps(self):
        return self.warps_m * self.warps_n

    @property
    def threads(self):
        return WARP * self.warps

    @property
    def warp_m(self):
        return self.block_m // self.warps_m

    @property
    def warp_n(self):
        return self.block_n // self.warps_n

    @property
    def frags_m(self):
        return self.warp_m // FRAG

    @property
    def frags_n(self):
        return self.warp_n // FRAG

    @property
    def k_steps(self):
        """MMA steps per shared-memory K tile."""
        return self.block_k // FRAG

    @property
    def smem_bytes(self):
        """Dynamic shared memory per block: the pipeline buffers (the epilogue reuses them)."""
        a = self.block_m * (self.block_k + SMEM_PAD)
        b = self.block_k * (self.block_n + SMEM_PAD)
        epilogue = self.warps * FRAG * (FRAG + 4) * 4
        return max(self.stages * (a + b) * INPUT_BYTES, epilogue)

    def accumulator_registers(self):
        """FP32 accumulator registers per thread: the warp's fragments spread over 32 lanes."""
        return self.frags_m * self.frags_n * FRAG * FRAG // WARP

    def grid(self, M, N):
        """Blocks to launch (a 1-D grid; the kernel orders the tiles for L2 reuse)."""
        return -(-M // self.block_m) * -(-N // self.block_n)

    def describe(self):
        return (f"{self.name}: block tile {self.block_m}x{self.block_n}x{self.block_k}, "
                f"{self.warps} warps ({self.warps_m}x{self.warps_n}) of {self.warp_m}x{self.warp_n} "
                f"= {self.frags_m}x{self.frags_n} fragments each, {self.stages} shared-memory "
                f"stages, {self.smem_bytes} B shared memory, {self.threads} threads")


# The lesson's picture: a 32x32 tile, four warps, one 16x16 fragment each, SRAM ping-pong.
LESSON = Tiling("lesson", 32, 32, 32, 2, 2, stages=2)
# The same pipeline at GPU scale: 128x128 tiles, 8 warps owning 64x32 (4x2 fragments) each.
# Two blocks per SM (16 warps) when registers allow: <= 128 per thread, which these fit unspilled.
PINGPONG = Tiling("pingpong", 128, 128, 32, 2, 4, stages=2, min_blocks_per_sm=2)
FAST = Tiling("fast", 128, 128, 32, 2, 4, stages=3, min_blocks_per_sm=2)
FAST4 = Tiling("fast4", 128, 128, 32, 2, 4, stages=4, min_blocks_per_sm=2)
# Wider warp tiles (64x64 = 4x4 fragments) read fewer fragments per MMA; no fragment prefetch,
# to stay within the register budget.
WIDE = Tiling("wide", 128, 256, 32, 2, 4, stages=3, fragment_prefetch=False)

TILINGS = {t.name: t for t in (LESSON, PINGPONG, FAST, FAST4, WIDE)}
DEFAULT = FAST


def get_tiling(tiling):
    """A :class:`Tiling` from its name (or the Tiling itself)."""
    if isinstance(tiling, Tiling):
        return tiling
    if tiling not in TILINGS:
        raise ValueError(f"unknown tiling {tiling!r}; known tilings: {', '.join(TILINGS)}")
    return TILINGS[tiling]


def hierarchy(n=128, tile=32, frag=FRAG):
    """Counts of the lesson's 128 / 32 / 16 hierarchy for an n x n x n GEMM.

    Returns a dict: SRAM tiles of C, tile pairs each C tile consumes along K, fragments per C
    tile (one warp each in the lesson's picture), MMA steps per fragment per tile pair, and the
    total number of 16x16x16 MMAs.
    """
    for name, value in (("n", n), ("tile", tile), ("frag", frag)):
        if not isinstance(value, int) or value <= 0:
            raise ValueError(f"{name} must be a positive whole number, got {value!r}")
    if n % tile or tile % frag:
        raise ValueError(f"expected frag | tile | n, got n={n}, tile={tile}, frag={frag}")
    tiles_per_side = n // tile
    frags_per_side = tile // frag
    return {
        "c_tiles": tiles_per_side ** 2,
        "tile_pairs_per_c_tile": tiles_per_side,
        "fragments_per_tile": frags_per_side ** 2,
        "mma_steps_per_tile_pair": frags_per_side,
        "mma_total": (n // frag) ** 3,
    }


def scalars_per_thread(tiles=3, side=FRAG):
    """Scalars one thread would hold if it kept ``tiles`` whole side x side tiles by itself."""
    return tiles * side * side


def elements_per_lane(side=FRAG, lanes=WARP):
    """Elements of one side x side fragment each lane holds when a warp shares it evenly."""
    return side * side // lanes
