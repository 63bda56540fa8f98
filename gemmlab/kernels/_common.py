"""What every GPU rung shares: the kernel signature, the launch plan, and the resource limits.

Every rung's kernel has the signature ``kernel(A, B, C_in, C_out, alpha, beta)`` on C-contiguous
float32 matrices and float32 scalars, and computes ``C_out = alpha A B + beta C_in``. When
``beta == 0`` the kernel does not read ``C_in`` (the BLAS convention: a NaN there does not leak
into the result), so ``C_in`` may then be any array of the right shape, ``C_out`` included.
"""
from dataclasses import dataclass

from ..perfmodel.hardware import MAX_STATIC_SHARED_BYTES, MAX_THREADS_PER_BLOCK

SIGNATURE = ("void(float32[:, ::1], float32[:, ::1], float32[:, ::1], float32[:, ::1], "
             "float32, float32)")
FLOAT32_BYTES = 4


@dataclass(frozen=True)
class Plan:
    """How one rung with given tiles is launched and what one block of it costs.

    ``tile_m x tile_n`` is the block of C one thread block computes; the grid covers C with them.
    ``reuse_m x reuse_n`` is the unit of reuse in the traffic model: every element of A a block
    loads serves ``reuse_n`` outputs, every element of B ``reuse_m``. It is the tile itself,
    except where the block shares nothing on chip (``naive``: 1 x 1).
    """
    block: tuple          # threads per block, (x, y)
    tile_m: int
    tile_n: int
    smem_bytes: int       # static shared memory per block
    reuse_m: int = None   # None: tile_m
    reuse_n: int = None   # None: tile_n

    @property
    def threads(self):
        x, y = self.block
        return x * y

    def grid(self, M, N):
        """Blocks to launch for an M x N output: x runs over columns, y over rows."""
        return (ceil_div(N, self.tile_n), ceil_div(M, self.tile_m))

    def check_limits(self, rung, tiles):
        """Raise a ValueError naming the tiles when a block exceeds what a GPU can launch."""
        given = ", ".join(f"{k}={v}" for k, v in tiles.items())
        if self.threads > MAX_THREADS_PER_BLOCK:
            raise ValueError(f"{rung} with {given} needs {self.threads} threads per block; a CUDA "
                             f"block has at most {MAX_THREADS_PER_BLOCK}: use smaller tiles")
        if self.smem_bytes > MAX_STATIC_SHARED_BYTES:
            raise ValueError(f"{rung} with {given} needs {self.smem_bytes} bytes of shared memory "
                             f"per block; static shared memory is capped at "
                             f"{MAX_STATIC_SHARED_BYTES} bytes (48 KB): use smaller tiles")

    def dram_bytes(self, M, N, K, reads_c=False):
        """Bytes moved to and from DRAM in the ideal tiling model: each reuse unit streams its
        reuse_m x K strip of A and K x reuse_n strip of B once, and C is written once (read too
        when beta != 0). Caches make real traffic lower for the small-tile rungs."""
        a = M * K * ceil_div(N, self.reuse_n or self.tile_n)
        b = K * N * ceil_div(M, self.reuse_m or self.tile_m)
        c = M * N * (2 if reads_c else 1)
        return FLOAT32_BYTES * (a + b + c)


def ceil_div(a, b):
    return -(-a // b)


def require(condition, message):
    """Tile constraints are a student's input: reject them with a message, not an assert."""
    if not condition:
        raise ValueError(message)


def is_power_of_two(n):
    return n > 0 and n & (n - 1) == 0


def warp_tiled(NTX, NTY):
    """Whether 8 x 4 warp patches tile an NTY x NTX thread grid of whole warps exactly."""
    return (NTX * NTY) % 32 == 0 and NTX % 8 == 0 and NTY % 4 == 0


def warp_patch(BM, BN, TM, TN):
    """(rows, cols): the patch of thread tiles that the 32 lanes of one warp own (rows along M,
    cols along N): 4 x 8 with warp tiling, else 32 consecutive thread ids in row-major order."""
    NTX, NTY = BN // TN, BM // TM
    if warp_tiled(NTX, NTY):
        return 4, 8
    return min(NTY, max(32 // NTX, 1)), min(NTX, 32)
