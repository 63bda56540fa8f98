"""Lesson 05, tiled GEMM: alpha/beta, the idealised traffic of naive vs tiled, tile counts, and the
shared-memory and thread budgets of one tile; and the two kernel labs (naive, tiled)."""
from ...labs.kernel_lab import NAIVE, TILED
from ...labs.solutions import solution
from ...perfmodel import gemm_traffic
from ...perfmodel.hardware import MAX_STATIC_SHARED_BYTES, MAX_THREADS_PER_BLOCK
from ...perfmodel.warps import WARP_SIZE, conflict_ways
from ._choices import options_text
from ...judging import Choice, Exact, Number, Question, Wrong

N_EX, T_EX = 64, 16                       # the seed's exercise: 64 x 64 matrices, T = 16
ROW, COL, ALPHA, BETA, C_IN = (1, 2, 3), (4, 5, 6), 2.0, 0.5, 10.0
T_SMEM = 32
N_MODEL, T_MODEL = 128, 32                # section 3's cell and section 4's picture
TRANSPOSE_TILE = 32                       # the worked transpose's tile on a GPU


def traffic_ratio(n, T):
    """Bytes of the no-reuse model over bytes of the tiled one (inputs and the write of C), as
    ``gl.perfmodel.gemm_traffic`` counts them."""
    return gemm_traffic(n, n, n, model="no_reuse") / gemm_traffic(n, n, n, model="tiled", tile=T)


def transpose_read_ways(tile, row_stride):
    """Bank-conflict ways of step (3) of the worked transpose, ``tile[tx, ty]``: one warp is the
    32 lanes tx = 0..31 of one row ty of the block, and lane tx reads word tx * row_stride + ty."""
    ty = 0
    return conflict_ways({tx: tx * row_stride + ty for tx in range(min(tile, WARP_SIZE))})


def input_reads(n, T):
    """Elements of A and B read in the idealised model for n x n matrices and T x T tiles (T = 1
    is the naive kernel: every output reads its row and column)."""
    return 2 * n**3 // T


def output_tiles(n, T):
    return (n // T) ** 2


def gemm_entry(row, col, alpha, beta, c_in):
    return alpha * sum(a * b for a, b in zip(row, col, strict=True)) + beta * c_in


def tiled_smem_bytes(T):
    return 2 * T * T * 4


def max_tile_side():
    """Largest T for which a T x T, one-output-per-thread block fits both GPU limits."""
    return max(T for T in range(1, 129)
               if T * T <= MAX_THREADS_PER_BLOCK and tiled_smem_bytes(T) <= MAX_STATIC_SHARED_BYTES)





SRAM_OPTIONS = {
    "a": "yes: shared memory is another name for all the SRAM on the chip, which is why the L1 "
         "cache and shared memory are carved from the same storage",
    "b": "no: shared memory is the part the program manages, visible to one thread block; the L1 "
         "cache and the register file are on-chip SRAM too, with other interfaces and scopes",
    "c": "no: shared memory is not on the chip; it is a region of HBM that the threads of a block "
         "can address, reserved for the block while it runs",
}

QUESTIONS = [
    Question(
        id="05.gemm_entry",
        prompt=f"C_out[i, j] = alpha (A B)[i, j] + beta C_in[i, j] for row i of A = {ROW}, column j "
               f"of B = {COL}, alpha = {ALPHA}, beta = {BETA}, C_in[i, j] = {C_IN} (exact).",
        answer=lambda: gemm_entry(ROW, COL, ALPHA, BETA, C_IN),
        kind=Number(rtol=1e-9),
        wrong=[
            Wrong(lambda: gemm_entry(ROW, COL, 1, 0, C_IN),
                  "that is the plain product C = AB. GEMM also scales it by alpha and adds "
                  "beta times the old C_in."),
            Wrong(lambda: gemm_entry(ROW, COL, ALPHA, 0, C_IN),
                  "you dropped beta C_in: the input C takes part unless beta = 0."),
            Wrong(lambda: gemm_entry(ROW, COL, ALPHA, 1, C_IN),
                  "you added C_in unscaled: it is multiplied by beta first."),
        ],
        hint="Dot product of the row and the column, times alpha, plus beta times C_in.",
        explain="Keeping C_in and C_out apart is what lets beta = 1 accumulate into an existing C.",
    ),
    Question(
        id="05.tile_reuse_factor",
        prompt=f"In the idealised model, by what factor does tiling with T = {T_EX} cut the input "
               f"reads of a {N_EX} x {N_EX} GEMM compared with no reuse (exact)?",
        answer=lambda: input_reads(N_EX, 1) / input_reads(N_EX, T_EX),
        kind=Number(rtol=1e-9, unit="x"),
        wrong=[
            Wrong(T_EX**2, "T^2 = 256 is the number of elements in a tile, not how often each "
                           "loaded element is used: each one serves T outputs of its row or column."),
            Wrong(N_EX // T_EX, "64/16 = 4 is the number of tiles along one side, not the reuse."),
            Wrong(N_EX, "64 would mean each element is loaded once for the whole matrix; with "
                        "T x T tiles it is loaded n/T times, so the saving is T, not n."),
        ],
        hint="Compare 2n^3 reads (no reuse) with 2n^3/T (tiles of side T).",
        explain="This is the idealised O(N^3) -> O(N^3/T) model: caches, edges and the writes of "
                "C make real traffic differ, so it does not promise a 16x faster kernel.",
    ),
    Question(
        id="05.output_tiles",
        prompt=f"How many T x T output tiles does a {N_EX} x {N_EX} C have for T = {T_EX}?",
        answer=lambda: output_tiles(N_EX, T_EX),
        kind=Exact(int),
        wrong=[
            Wrong(N_EX // T_EX, "4 is the number of tiles along one side; C has 4 x 4 of them."),
            Wrong(T_EX**2, "256 is the number of elements in one tile."),
        ],
        hint="Tiles per side is n/T; the grid is square.",
    ),
    Question(
        id="05.smem_bytes",
        prompt=f"Bytes of shared memory one block of the `tiled` kernel needs for T = {T_SMEM} "
               "(one T x T tile of A and one of B, float32).",
        answer=lambda: tiled_smem_bytes(T_SMEM),
        kind=Exact(int, unit="bytes"),
        wrong=[
            Wrong(T_SMEM * T_SMEM * 4, "that is one tile; the block holds a tile of A and one of B."),
            Wrong(2 * T_SMEM * T_SMEM, "that counts elements, not bytes: float32 is 4 bytes."),
            Wrong(2 * T_SMEM * T_SMEM * 8, "float32 is 4 bytes, not 8."),
        ],
        hint="2 tiles x T^2 elements x 4 bytes.",
    ),
    Question(
        id="05.max_tile_side",
        prompt="The largest T for which the `tiled` kernel (T x T threads, one output each, two "
               "T x T float32 tiles in shared memory) can launch: at most 1024 threads and 48 KB "
               "of static shared memory per block.",
        answer=max_tile_side,
        kind=Exact(int),
        wrong=[
            Wrong(78, "78 fits the 48 KB of shared memory, but a 78 x 78 block has 6084 threads; "
                      "a block has at most 1024. Bigger tiles are not free: every resource limits."),
            Wrong(64, "64 x 64 tiles fit in shared memory (32 KB) but need 4096 threads per block."),
        ],
        hint="Check both limits: T^2 threads and 8 T^2 bytes.",
        explain="Past T = 32 the kernel needs more work per thread (lesson 10) to grow the tile.",
    ),
    Question(
        id="05.lab_naive",
        prompt="Write lab_naive(A, B, C), a @cuda.jit kernel computing C = A @ B (float32, "
               "row-major): thread (threadIdx.x, threadIdx.y) of block (blockIdx.x, blockIdx.y) "
               "computes C[blockIdx.y*16 + threadIdx.y, blockIdx.x*16 + threadIdx.x] as one dot "
               "product. The lab launches blocks of 16 x 16 threads, grid (ceil(N/16), ceil(M/16)).",
        answer=lambda: solution("05.lab_naive"),
        kind=NAIVE,
        hint="Guard with row < M and col < N, sum in a local variable, write C once.",
        explain="Each thread reads its whole row of A and column of B from global memory: 2K "
                "loads for K multiply-adds, the O(N^3) traffic of section 3.",
    ),
    Question(
        id="05.lab_tiled",
        prompt="Write lab_tiled(A, B, C): the launch and ownership of lab_naive, but the block "
               "copies 16 x 16 tiles of A and B into shared memory (one element of each per "
               "thread, zeros past the edges), waits, multiplies from shared memory, waits, and "
               "moves to the next K tile.",
        answer=lambda: solution("05.lab_tiled"),
        kind=TILED,
        hint="Two cuda.syncthreads() per K tile: after the loads, and after the compute.",
        explain="Each element loaded from global memory now serves 16 threads: reads of A drop "
                "from N to about N/16 per element.",
    ),
    Question(
        id="05.sram_is_shared",
        prompt="Is all of a GPU's on-chip SRAM shared memory? Pick one:\n"
               + options_text(SRAM_OPTIONS),
        answer="b",
        kind=Choice(tuple(SRAM_OPTIONS)),
        wrong=[
            Wrong("a", "shared memory is built from on-chip SRAM, but the converse does not hold: "
                       "the L1 cache (which shares storage with it), the register file and other "
                       "caches are SRAM too, and a kernel cannot address them as shared memory."),
            Wrong("c", "shared memory sits on the chip, next to the SMs' arithmetic units; that is "
                       "why a tile loaded into it can be reused cheaply by the whole block."),
        ],
    ),
    Question(
        id="05.traffic_ratio",
        prompt=f"gl.perfmodel.gemm_traffic counts the bytes of an N x N GEMM with no reuse and "
               f"with T x T tiles (inputs, plus C written once). For N = {N_MODEL} and "
               f"T = {T_MODEL}, by what factor does tiling cut the total bytes (3 significant "
               f"figures)?",
        answer=lambda: traffic_ratio(N_MODEL, T_MODEL),
        kind=Number(sig=3, rtol=5e-3, unit="x"),
        wrong=[
            Wrong(T_MODEL, f"{T_MODEL} is the saving on the input reads alone. O(N^3/T) is an "
                           "order of growth, not an exact byte count: it drops the write of C "
                           "(the same in both models, so it dilutes the ratio), and real traffic "
                           "also depends on edges and caches."),
            Wrong(T_MODEL**2, "T^2 is the size of a tile, not how often a loaded element is "
                              "reused (T times)."),
        ],
        hint="naive = (2N^3 + N^2) x 4 bytes; tiled = (2N^3/T + N^2) x 4 bytes.",
        explain="The input reads shrink exactly T times in this model; the total a little less.",
    ),
    Question(
        id="05.transpose_conflict_ways",
        prompt=f"The worked transpose with TILE = {TRANSPOSE_TILE} but without the padding column "
               f"(a shared tile of shape ({TRANSPOSE_TILE}, {TRANSPOSE_TILE}), float32): in step "
               "(3) one warp's 32 lanes (tx = 0..31, one ty) read tile[tx, ty]. How many ways is "
               "that shared-memory bank conflict (1 = conflict-free)?",
        answer=lambda: transpose_read_ways(TRANSPOSE_TILE, TRANSPOSE_TILE),
        kind=Exact(int),
        wrong=[
            Wrong(lambda: transpose_read_ways(TRANSPOSE_TILE, TRANSPOSE_TILE + 1),
                  "conflict-free is the padded tile (row stride 33: lane tx's word lands in bank "
                  "(tx + ty) mod 32, all different). Without padding the row stride is 32 words, "
                  "so every lane's word lies in bank ty: the same bank for the whole warp."),
            Wrong(0, "a warp access needs at least one pass: 1 means conflict-free."),
        ],
        hint="Bank = word index mod 32; the word of lane tx is tx * 32 + ty.",
        explain="The store in step (1), tile[ty, tx], is conflict-free either way (consecutive "
                "words); one padding float per row fixes the column read.",
    ),
]
