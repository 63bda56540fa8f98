"""Lesson 04, roofline and data movement: FLOP vs FLOP/s, intensity, the H200 roofline, GEMM
traffic models, an LRU cache, tiling, fusion, batch size, attention memory and pipelines."""
import numpy as np

from ...perfmodel import (attention_scores_bytes, chip, effective_bandwidth, fusion_traffic,
                          gemm_flops, gemm_storage_bytes, gemm_traffic, intensity,
                          linear_intensity, pipeline_time, ridge_point, roofline_time, simulate,
                          tile_workspace_bytes, vector_add_counts)
from ._choices import options_text
from ...judging import Array, Choice, Exact, Function, Number, Question, Wrong

H200 = chip("H200 SXM")
P, B = H200.peak("fp32"), H200.bandwidth.value
N_VEC = 10**8                       # vector add and fusion: 1e8 FP32 elements
N_GEMM = 1024                       # square FP32 GEMM
MEASURED_VEC_MS, REPORTED_VEC_MS = 0.625, 0.125
LRU_TRACE, LRU_LINE = (0, 4, 8, 0, 4, 8), 4
TILE_A = np.arange(1, 33).reshape(4, 8)        # the tile animation's A (4 x 8) and B (8 x 4)
TILE_B = np.arange(1, 33).reshape(8, 4)
BUDGET, TILES = 64 * 1024, (32, 64, 128)
LINEAR_K = LINEAR_N = 4096
HEADS, SEQ = 32, 8192
BATCHES, LOAD_MS, COMPUTE_MS = 4, 2.0, 5.0
GIB = 2**30


def _vec():
    return vector_add_counts(N_VEC)


def _gemm_traffic(model):
    return gemm_traffic(N_GEMM, N_GEMM, N_GEMM, model)


def _gemm_time(model):
    return roofline_time(gemm_flops(N_GEMM, N_GEMM, N_GEMM), _gemm_traffic(model), P, B)


def _tile_intensity(T):
    return gemm_flops(N_GEMM, N_GEMM, N_GEMM) / gemm_traffic(N_GEMM, N_GEMM, N_GEMM, "tiled", tile=T)


def _largest_fitting_tile():
    return max(T for T in TILES if tile_workspace_bytes(T) <= BUDGET)


def _smallest_tile_over_ridge():
    return min(T for T in TILES if _tile_intensity(T) > H200.ridge_point())


def _smallest_m_over_ridge():
    m = 1
    while linear_intensity(m, LINEAR_K, LINEAR_N) <= H200.ridge_point():
        m += 1
    return m


def _smallest_fp16_m(ridge, itemsize=2):
    """Smallest whole M whose FP16 linear layer (K = N = 4096) is above ``ridge``."""
    return next(m for m in range(1, 10**5) if linear_intensity(m, LINEAR_K, LINEAR_N, itemsize) > ridge)


def _block_inputs(model):
    """Input elements the 2x2 block of C = TILE_A TILE_B loads: the block is a 2 x 2 x 8 GEMM of
    its own, with 2x2 tiles; the traffic model counts elements (itemsize 1) and C's 4 writes."""
    K = TILE_A.shape[1]
    tile = {"tiled": 2}.get(model)
    return gemm_traffic(2, 2, K, model, itemsize=1, tile=tile) - 2 * 2



PIPELINE_DEPENDENT = {
    "a": "yes, as before: with two buffers the next load always runs while the current batch is "
         "being computed, whatever it reads",
    "b": "only with three buffers: one for the batch being computed, one for its output, and one "
         "for the next input being loaded",
    "c": "no: the next input does not exist until the previous compute has produced it, so its "
         "load must always wait for that output",
}
SOURCE_LOADS = {
    "a": "yes: each load in the source is one access to HBM, since the GPU's caches only keep data "
         "that a kernel explicitly places in shared memory",
    "b": "no: caches serve many of those loads while prefetchers and write-allocation add others; "
         "the HBM traffic is measured with counters, and the two models only bracket it",
    "c": "yes, as long as the matrices are larger than the L2 cache: then no element stays cached "
         "between two of its uses, and each load of the source goes out to HBM",
}
SAME_FLOPS = {
    "a": "it cannot cut it a lot: a GEMM's time is set by its FLOPs and the peak, so with the same "
         "2MNK FLOPs only small gains from tuning are left",
    "b": "the optimisation must have removed FLOPs that the 2MNK count does not see, such as index "
         "arithmetic and repeated address calculations in the loop",
    "c": "the time is bounded by the slower of computing and moving data; without reuse the bytes "
         "were the bound, and keeping data on chip cuts the bytes",
}
BELOW_SLOPE = {
    "a": "feed the memory better at the same intensity (enough parallel work, contiguous accesses, "
         "fewer launches and syncs): the point can first rise to its roof",
    "b": "raise its arithmetic intensity by reusing data on chip: a point below the slope can "
         "climb only after it moves right, since the slope can cap its rate",
    "c": "move it to a GPU with a higher compute peak: a faster chip raises the whole roofline, "
         "and the point rises with it at the same intensity",
}
REPORT_FIRST = {
    "a": "just that: a kernel that finishes in 0.125 ms already moves its bytes fast enough, so "
         "follow the report and raise the arithmetic throughput with more or faster compute units",
    "b": "the measurement: did the timer wait for the kernel, is the element count right, did the "
         "bytes cross HBM; only consistent numbers say whether to cut bytes or feed better",
    "c": "nothing: at 9.6 TB/s, twice the HBM bandwidth, the 1.2 GB must have come from the L2 "
         "cache, which is faster than HBM and explains the figure",
}
CPU_TABLE = {
    "a": "yes: the table times the tiled loops against the reordered one on real hardware, and "
         "tiling loses on this CPU while it wins in each of the course's GPU lessons",
    "b": "no, it shows something else: tiling loses only because the compiler can vectorise the "
         "reordered loop and cannot vectorise the tiled ones",
    "c": "no: it is one implementation at a few sizes on one machine, the reordered loop already "
         "reused data, and GPU kernels tile explicitly (and can lose too, with bad tiles)",
}
CPU_FOLLOWUP = {
    "a": "count cache misses per version with hardware counters, rerun far beyond the last-level "
         "cache, and time the tiled loops on tiny always-cached matrices to see their overhead",
    "b": "run the same table ten more times and keep each version's fastest run, so that noise "
         "from other processes on the machine no longer hides which explanation is right",
    "c": "compare the GFLOP/s of the versions at one more size, halfway between the two already "
         "measured: the trend of each version's speedup with the size tells the two causes apart",
}
TILING_VS_RECOMPUTE = {
    "a": "they relieve different limits: tiling spends fast-memory capacity to avoid moving the "
         "same bytes again (bandwidth); recomputation spends FLOPs to avoid storing activations "
         "(capacity)",
    "b": "they contradict each other: tiling keeps data close so as not to fetch it again, "
         "recomputation throws data away and fetches its inputs again, so at most one of them can "
         "be the right idea",
    "c": "they do the same thing in different places: both reduce the FLOPs, tiling inside one "
         "GEMM kernel and recomputation across the layers of the whole model",
}
M_ROWS = {
    "a": "that 128 users are being served at once: each row of the activation matrix is one user's "
         "request, so M counts the requests in the current batch",
    "b": "only that 128 input vectors are processed together: 128 positions of one request, one "
         "position of each of 128 requests, or any mix in between",
    "c": "that the batch holds 128 words: the rows of X are the words of the input text, one row "
         "per word, across all the requests together",
}
MEMORY_BOUND = {
    "a": "exactly that Q / B is larger than F / P in the roofline model: the term is defined by "
         "that one comparison and means nothing else",
    "b": "limited by memory: by its bandwidth (Q / B is the larger time) or by waiting on its "
         "latency with too few requests in flight",
    "c": "that its data may not fit in the GPU's memory, so the kernel must stream it in pieces "
         "from the host while it runs",
}
INTENSITY_LEVEL = {
    "a": "which boundary its bytes cross (HBM to the chip, L2 to L1, DRAM to a CPU cache): every "
         "level has its own bandwidth to set it against",
    "b": "nothing: intensity is a property of the algorithm alone, its FLOPs divided by the bytes "
         "of its inputs and outputs, whatever machine runs it",
    "c": "only the data type, since the bytes per element (4 for FP32, 2 for FP16) are the one "
         "thing that can change the bytes a given algorithm may move",
}
ADD_RATE = P / 2                    # the FP32 peak counts an FMA as 2 FLOPs; an add is 1


def _roofline_cases():
    rng = np.random.default_rng(4)
    return [tuple(float(v) for v in rng.uniform(1, 1e3, size=4)) for _ in range(6)]


def _roofline_hidden(rng):
    return [tuple(float(v) for v in 10.0 ** rng.uniform(-3, 6, size=4)) for _ in range(8)]


# Enough intensity, too little parallel work: a K-heavy GEMM cut into 128 x 128 output tiles,
# one block per tile, on the H200's SMs; and the HGX H200 board (8 GPUs) against one GPU's table.
THIN_M = THIN_N = 256
THIN_K, THIN_TILE = 16384, 128
HGX_GPUS = 8


def thin_gemm_intensity():
    return intensity(gemm_flops(THIN_M, THIN_N, THIN_K), gemm_traffic(THIN_M, THIN_N, THIN_K, "ideal"))


def busy_sms():
    """SMs a launch of one block per output tile keeps busy at once (a block runs on one SM)."""
    tiles = -(-THIN_M // THIN_TILE) * -(-THIN_N // THIN_TILE)
    return min(tiles, int(H200.sms.value))


FUSION_KEEPS_U = {
    "a": "never: a fused kernel keeps every intermediate in registers, at no other cost, and "
         "anything that needs u later can recompute it from x and y",
    "b": "always: fusion can only save kernel launches, since the hardware still writes each "
         "intermediate to HBM between the two operations inside the kernel",
    "c": "when another operator still reads u (a later layer, or the backward pass): then it must "
         "be written anyway; fusing also changes each thread's registers and how the work is split",
}
TILED_SOFTMAX = {
    "a": "the running maximum and sum of each row's softmax, merged from tile to tile; the result "
         "is the same mathematically, but the new order of additions may change the last bits",
    "b": "nothing: each tile's softmax is complete by itself, since the exponentials of different "
         "scores are independent, and the result is bit for bit the untiled one",
    "c": "the whole row of scores, kept on chip: a tile cannot be normalised before all of them "
         "are known, so the result is bit for bit the untiled one",
}

QUESTIONS = [
    Question(
        id="04.rate_tflops",
        prompt="A kernel does 1e9 floating-point operations in 1 ms. Its rate in TFLOP/s (exact).",
        answer=lambda: 1e9 / 1e-3 / 1e12,
        kind=Number(unit="TFLOP/s"),
        wrong=[
            Wrong(1e12, "that is the rate in FLOP/s; the question asks for TFLOP/s (1e12 FLOP/s)."),
            Wrong(1e-3, "1e9 FLOP is 1 GFLOP of WORK; divided by 1e-3 s it is 1e12 FLOP/s."),
        ],
        explain="FLOP counts work, FLOP/s is a rate; a datasheet's 'TFLOPS' means TFLOP/s.",
    ),
    Question(
        id="04.vector_add_intensity",
        prompt="Arithmetic intensity of the FP32 vector add C[i] = A[i] + B[i] (each array read "
               "or written once), in FLOP per byte (2 significant figures).",
        answer=lambda: intensity(*_vec()),
        kind=Number(sig=2, unit="FLOP/B"),
        wrong=[
            Wrong(1 / 8, "that forgets writing C: two 4-byte reads AND one 4-byte write, 12 B."),
            Wrong(1 / 3, "that counts elements, not bytes: each FP32 element is 4 bytes."),
            Wrong(1 / 4, "that counts only one array; the add reads A and B and writes C."),
        ],
        hint="1 FLOP per element; bytes = 3 arrays x 4 B.",
    ),
    Question(
        id="04.vector_add_time_ms",
        answer_name="vector_add_ms",
        prompt="Lower bound on the time of that vector add with 1e8 elements on the H200 "
               "(67 TFLOP/s FP32, 4.8 TB/s), in ms (exact).",
        answer=lambda: roofline_time(*_vec(), P, B) * 1e3,
        kind=Number(unit="ms"),
        wrong=[
            Wrong(lambda: N_VEC / P * 1e3, "that is the compute bound F/P. The bound is the "
                                           "LARGER of F/P and Q/B: here the 1.2 GB transfer."),
            Wrong(lambda: 12 * N_VEC / 2**30 / 4.8e3 * 1e3,
                  "that mixes GiB with the decimal TB/s; datasheet bandwidth uses 10^12 B/s."),
            Wrong(lambda: 8 * N_VEC / B * 1e3,
                  "that is 0.8 GB at 4.8 TB/s: either writing C (0.4 GB) is left out, or reads and "
                  "writes were given their own 4.8 TB/s each (0.8 GB read while 0.4 GB is "
                  "written). HBM bandwidth is one budget shared by reads and writes: all 1.2 GB "
                  "go through the same 4.8 TB/s."),
        ],
    ),
    Question(
        id="04.vector_add_tflops",
        prompt="The best rate that vector add can reach under this model, in TFLOP/s (exact).",
        answer=lambda: N_VEC / roofline_time(*_vec(), P, B) / 1e12,
        kind=Number(unit="TFLOP/s"),
        wrong=[
            Wrong(lambda: P / 1e12, "67 TFLOP/s is the compute roof; at 1/12 FLOP/B the "
                                    "bandwidth roof is far lower: 4.8e12 / 12."),
        ],
    ),
    Question(
        id="04.double_peak_time_ms",
        answer_name="double_peak_ms",
        prompt="Same vector add: only the compute peak is doubled. The new lower bound in ms (exact).",
        answer=lambda: roofline_time(*_vec(), 2 * P, B) * 1e3,
        kind=Number(unit="ms"),
        wrong=[
            Wrong(lambda: roofline_time(*_vec(), P, 2 * B) * 1e3,
                  "a bandwidth-bound kernel does not speed up with more compute: the bound stays "
                  "Q/B."),
        ],
    ),
    Question(
        id="04.double_bandwidth_time_ms",
        answer_name="double_bandwidth_ms",
        prompt="Only the HBM bandwidth is doubled instead. The new lower bound in ms (exact).",
        answer=lambda: roofline_time(*_vec(), P, 2 * B) * 1e3,
        kind=Number(unit="ms"),
        wrong=[
            Wrong(lambda: roofline_time(*_vec(), P, B) * 1e3,
                  "the bound IS the transfer time Q/B, so doubling B halves it."),
        ],
    ),
    Question(
        id="04.gemm_gflop",
        prompt="FLOPs of a 1024 x 1024 x 1024 GEMM (2MNK convention), in GFLOP "
               "(3 significant figures).",
        answer=lambda: gemm_flops(N_GEMM, N_GEMM, N_GEMM) / 1e9,
        kind=Number(sig=3, unit="GFLOP"),
        wrong=[
            Wrong(lambda: N_GEMM**3 / 1e9, "that counts multiply-adds; each is 2 FLOPs."),
            Wrong(lambda: gemm_flops(N_GEMM, N_GEMM, N_GEMM) / 2**30,
                  "FLOP prefixes are decimal: G = 10^9, not 2^30."),
        ],
    ),
    Question(
        id="04.gemm_storage_mib",
        answer_name="storage_mib",
        prompt="Memory A, B and C occupy for that GEMM in FP32, in MiB (exact).",
        answer=lambda: gemm_storage_bytes(N_GEMM, N_GEMM, N_GEMM) / 2**20,
        kind=Number(unit="MiB"),
        wrong=[
            Wrong(lambda: gemm_storage_bytes(N_GEMM, N_GEMM, N_GEMM) / 1e6,
                  "that is MB (10^6 B); a MiB is 2^20 B."),
            Wrong(8, "C needs its own 4 MiB too: three matrices."),
        ],
    ),
    Question(
        id="04.no_reuse_traffic_gb",
        answer_name="no_reuse_gb",
        prompt="Traffic of that GEMM under the no-reuse model (each output reads a full row of A "
               "and column of B; C written once), in GB (10^9 B), to 3 significant figures.",
        answer=lambda: _gemm_traffic("no_reuse") / 1e9,
        kind=Number(sig=3, unit="GB"),
        wrong=[
            Wrong(lambda: _gemm_traffic("ideal") / 1e9,
                  "that is the ideal model (each element once). Without reuse every one of the "
                  "1024^2 outputs reads 2 x 1024 inputs."),
            Wrong(lambda: N_GEMM**3 * 4 / 1e9, "each output reads a row of A AND a column of B."),
        ],
    ),
    Question(
        id="04.gemm_ideal_time_us",
        answer_name="gemm_ideal_us",
        prompt="Lower bound on the time of that GEMM on the H200 under the ideal traffic model, "
               "in microseconds (2 significant figures).",
        answer=lambda: _gemm_time("ideal") * 1e6,
        kind=Number(sig=2, unit="us"),
        wrong=[
            Wrong(lambda: _gemm_traffic("ideal") / B * 1e6,
                  "that is the transfer bound Q/B; with full reuse the compute bound F/P is "
                  "larger, and the larger one is the bound."),
        ],
    ),
    Question(
        id="04.gemm_no_reuse_time_ms",
        answer_name="gemm_no_reuse_ms",
        prompt="The same lower bound under the no-reuse model, in ms (3 significant figures).",
        answer=lambda: _gemm_time("no_reuse") * 1e3,
        kind=Number(sig=3, unit="ms"),
        wrong=[
            Wrong(lambda: _gemm_time("ideal") * 1e3, "that is the ideal model's bound; without "
                                                     "reuse 8.6 GB must cross at 4.8 TB/s."),
        ],
    ),
    Question(
        id="04.gemm_ideal_intensity",
        answer_name="gemm_intensity",
        prompt="Arithmetic intensity of that GEMM under the ideal model, in FLOP/B "
               "(4 significant figures).",
        answer=lambda: intensity(gemm_flops(N_GEMM, N_GEMM, N_GEMM), _gemm_traffic("ideal")),
        kind=Number(sig=4, unit="FLOP/B"),
        wrong=[
            Wrong(lambda: intensity(gemm_flops(N_GEMM, N_GEMM, N_GEMM), _gemm_traffic("no_reuse")),
                  "that is the no-reuse model: about 1/4 FLOP/B, like an element-wise kernel."),
            Wrong(lambda: gemm_flops(N_GEMM, N_GEMM, N_GEMM) / (3 * N_GEMM**2),
                  "that divides by elements; intensity is per BYTE (4 per FP32 element)."),
        ],
    ),
    Question(
        id="04.ridge_point",
        answer_name="ridge",
        prompt="The FP32 ridge point of the H200 (67 TFLOP/s, 4.8 TB/s), in FLOP/B "
               "(2 significant figures).",
        answer=lambda: ridge_point(P, B),
        kind=Number(sig=2, unit="FLOP/B", rtol=2e-3),
        wrong=[
            Wrong(lambda: B / P, "that is B/P, bytes per FLOP. The ridge is P/B: the intensity "
                                 "where B x I reaches P."),
            Wrong(lambda: P / (2 * B), "that gives reads and writes each their own 4.8 TB/s. "
                                       "The 4.8 TB/s is shared by reads and writes together: "
                                       "the ridge is 67 / 4.8."),
        ],
        explain="Below about 14 FLOP/B a kernel cannot reach the FP32 peak on this GPU, whatever "
                "its code does.",
    ),
    Question(
        id="04.measured_fraction_of_roof",
        answer_name="fraction_of_roof",
        prompt="The 1e8-element vector add is measured at 0.625 ms. Its effective bandwidth as a "
               "fraction of the 4.8 TB/s roof, from 0 to 1 (exact).",
        answer=lambda: effective_bandwidth(_vec()[1], MEASURED_VEC_MS * 1e-3) / B,
        kind=Number(),
        wrong=[
            Wrong(lambda: effective_bandwidth(_vec()[1], MEASURED_VEC_MS * 1e-3) / B * 100,
                  "give a fraction, not a percentage."),
            Wrong(lambda: MEASURED_VEC_MS / 0.25, "that is time over bound; the fraction of the "
                                                  "roof is bound over time."),
        ],
    ),
    Question(
        id="04.reported_bandwidth_tbs",
        answer_name="reported_tbs",
        prompt="A report claims the same 1.2 GB vector add ran in 0.125 ms on the H200. The "
               "bandwidth this implies, in TB/s (exact).",
        answer=lambda: effective_bandwidth(_vec()[1], REPORTED_VEC_MS * 1e-3) / 1e12,
        kind=Number(unit="TB/s"),
        wrong=[
            Wrong(4.8, "4.8 TB/s is the roof; the report implies twice that, which is impossible "
                       "for HBM traffic: check the timing, the byte count and whether the data "
                       "came from cache."),
        ],
    ),
    Question(
        id="04.report_is_consistent",
        answer_name="report_consistent",
        prompt="Is that report consistent with its own assumptions (1.2 GB of HBM traffic, "
               "4.8 TB/s)? True or False.",
        answer=lambda: effective_bandwidth(_vec()[1], REPORTED_VEC_MS * 1e-3) <= B,
        kind=Exact(bool),
        wrong=[
            Wrong(True, "0.125 ms is below the 0.25 ms bound: either the time, the bytes or the "
                        "'HBM' assumption is wrong. Check those before optimising arithmetic, "
                        "which was never the limit."),
        ],
    ),
    Question(
        id="04.lru_two_lines_bytes",
        answer_name="lru_2",
        prompt="Trace 0, 4, 8, 0, 4, 8 (1-byte reads), 4-byte lines, LRU cache of 2 lines: bytes "
               "brought in.",
        answer=lambda: simulate(LRU_TRACE, LRU_LINE, 2).bytes_moved,
        kind=Exact(int, unit="B"),
        wrong=[
            Wrong(lambda: simulate(LRU_TRACE, LRU_LINE, 3).bytes_moved,
                  "that is the 3-line cache. With 2 lines LRU evicts each line just before it is "
                  "needed again: every access misses."),
            Wrong(6, "each miss brings a whole 4-byte line, not the 1 byte asked for."),
        ],
    ),
    Question(
        id="04.lru_three_lines_bytes",
        answer_name="lru_3",
        prompt="The same trace with 3 lines: bytes brought in.",
        answer=lambda: simulate(LRU_TRACE, LRU_LINE, 3).bytes_moved,
        kind=Exact(int, unit="B"),
        wrong=[
            Wrong(lambda: simulate(LRU_TRACE, LRU_LINE, 2).bytes_moved,
                  "3 lines hold all three addresses: only the first three accesses miss."),
        ],
    ),
    Question(
        id="04.reorder_changes_k_order",
        answer_name="k_order_changes",
        prompt="Swapping the j and k loops (i-k-j instead of i-j-k): does the order in which the k "
               "products are added into each C[i,j] change? True or False.",
        answer=False,
        kind=Exact(bool),
        wrong=[
            Wrong(True, "for a fixed C[i,j], k still runs 0, 1, ..., K-1; only the order in which "
                        "DIFFERENT outputs progress changes. Same math, same rounding, different "
                        "memory traffic."),
        ],
    ),
    Question(
        id="04.tile_loads",
        prompt="A 4x8, B 8x4, the 2x2 block at the top left of C, K in steps of 2: input "
               "elements brought in to compute the block.",
        answer=lambda: _block_inputs("tiled"),
        kind=Exact(int, unit="elements"),
        wrong=[
            Wrong(lambda: _block_inputs("no_reuse"),
                  "that is what the four outputs would load each reading its own row and "
                  "column. With the block, each pair of input tiles serves all four."),
            Wrong(16, "each of the 4 steps loads a 2x2 tile of A AND a 2x2 tile of B."),
        ],
    ),
    Question(
        id="04.tile_output",
        answer_name="block",
        prompt="With A = np.arange(1, 33).reshape(4, 8) and B = np.arange(1, 33).reshape(8, 4), "
               "the finished 2x2 block C[0:2, 0:2].",
        answer=lambda: (TILE_A @ TILE_B)[:2, :2],
        kind=Array(),
        wrong=[
            Wrong(lambda: (TILE_A[:2, :2] @ TILE_B[:2, :2]),
                  "that is only the first K step: the partial sums need all 4 steps along K."),
        ],
    ),
    Question(
        id="04.largest_tile_in_budget",
        answer_name="largest_tile",
        prompt="Workspace 3 T^2 x 4 B, budget 64 KiB: the largest of T = 32, 64, 128 that fits.",
        answer=_largest_fitting_tile,
        kind=Exact(int),
        wrong=[
            Wrong(128, "3 x 128^2 x 4 B = 192 KiB, three times the budget."),
            Wrong(32, "64 fits too: 3 x 64^2 x 4 B = 48 KiB."),
        ],
    ),
    Question(
        id="04.smallest_tile_over_ridge",
        answer_name="smallest_tile",
        prompt="For N = 1024 FP32 and the tiled traffic model, the smallest of T = 32, 64, 128 "
               "whose intensity exceeds the H200's 13.96 FLOP/B ridge.",
        answer=_smallest_tile_over_ridge,
        kind=Exact(int),
        wrong=[
            Wrong(32, "T = 32 gives about T/4 = 8 FLOP/B: below the ridge."),
            Wrong(128, "T = 64 already gives about 15.5 FLOP/B, above 13.96."),
        ],
        explain="Crossing the ridge makes peak possible under the model, not guaranteed.",
    ),
    Question(
        id="04.fused_traffic_gb",
        answer_name="fused_gb",
        prompt="u = x + y, then z = u * w, N = 1e8, FP32: HBM traffic of the FUSED kernel in GB "
               "(exact).",
        answer=lambda: fusion_traffic(N_VEC)["fused_bytes"] / 1e9,
        kind=Number(unit="GB"),
        wrong=[
            Wrong(lambda: fusion_traffic(N_VEC)["unfused_bytes"] / 1e9,
                  "that is the unfused pair, where u is written and read back."),
            Wrong(lambda: 5 * N_VEC * 4 / 1e9, "fused, u never leaves the chip: read x, y, w, "
                                               "write z, 4 arrays."),
        ],
    ),
    Question(
        id="04.fusion_speedup_bound",
        answer_name="fusion_bound",
        prompt="The ideal speedup of fusing, if both versions are bandwidth-bound (exact).",
        answer=lambda: fusion_traffic(N_VEC)["unfused_bytes"] / fusion_traffic(N_VEC)["fused_bytes"],
        kind=Number(unit="x"),
        wrong=[
            Wrong(2, "two kernels become one, but the bytes go from 24N to 16N: 1.5x."),
        ],
    ),
    Question(
        id="04.fusion_guaranteed",
        prompt="Does that guarantee the fused kernel measures 1.5x faster? True or False.",
        answer=False,
        kind=Exact(bool),
        wrong=[
            Wrong(True, "1.5x is a bound of a traffic model; real kernels may not reach the "
                        "bandwidth roof, and fusing changes registers, launches and parallelism."),
        ],
    ),
    Question(
        id="04.linear_intensity_m128",
        answer_name="linear_i",
        prompt="Intensity of a linear layer X[M,K] W[K,N] with K = N = 4096, M = 128, FP32, each "
               "matrix crossing HBM once, in FLOP/B (2 significant figures).",
        answer=lambda: linear_intensity(128, LINEAR_K, LINEAR_N),
        kind=Number(sig=2, unit="FLOP/B"),
        wrong=[
            Wrong(64, "M/2 counts only the weights; X and Y cross HBM too."),
        ],
    ),
    Question(
        id="04.smallest_m_over_ridge",
        answer_name="smallest_m",
        prompt="With K = N = 4096 FP32, the smallest M whose intensity exceeds the H200's FP32 "
               "ridge point.",
        answer=_smallest_m_over_ridge,
        kind=Exact(int, unit="rows"),
        wrong=[
            Wrong(28, "at M = 28 the intensity is about 13.8 FLOP/B, still below 13.96."),
        ],
    ),
    Question(
        id="04.tc_ridge_h100",
        answer_name="h100_tc_ridge",
        prompt="The FP16 Tensor Core ridge point of the H100 SXM, from gl.perfmodel.HARDWARE "
               "(dense peak over HBM bandwidth), in FLOP/B (3 significant figures).",
        answer=lambda: chip("H100 SXM").ridge_point("fp16"),
        kind=Number(sig=3, unit="FLOP/B"),
        wrong=[
            Wrong(lambda: chip("H100 SXM").ridge_point("fp32"),
                  "that is the FP32 CUDA-core ridge. A GEMM on Tensor Cores meets the FP16 Tensor "
                  "Core peak, about 15x the FP32 one, so its ridge is 15x further right."),
            Wrong(lambda: 2 * chip("H100 SXM").ridge_point("fp16"),
                  "that uses the printed peak with 2:4 sparsity; the dense peak is half of it."),
            Wrong(lambda: H200.ridge_point("fp16"),
                  "that is the H200's ridge: same Tensor Cores, but 4.8 TB/s of HBM against the "
                  "H100 SXM's 3.35 TB/s."),
        ],
    ),
    Question(
        id="04.tc_smallest_m",
        answer_name="smallest_m_tc",
        prompt="With K = N = 4096 and FP16 (2-byte) X, W and Y, the smallest M whose intensity "
               "exceeds the H200's FP16 Tensor Core ridge point.",
        answer=lambda: _smallest_fp16_m(H200.ridge_point("fp16")),
        kind=Exact(int, unit="rows"),
        wrong=[
            Wrong(_smallest_m_over_ridge,
                  "that crosses the FP32 CUDA-core ridge (13.96 FLOP/B). An FP16 GEMM runs on "
                  "Tensor Cores, whose ridge is about 206 FLOP/B: it needs far more rows."),
            Wrong(lambda: _smallest_fp16_m(H200.ridge_point("fp16"), itemsize=4),
                  "that counts 4 bytes per element; FP16 elements are 2 bytes."),
            Wrong(lambda: int(H200.ridge_point("fp16")) + 1,
                  "that counts only the weights' bytes (intensity M); X and Y cross HBM too."),
        ],
    ),
    Question(
        id="04.decode_compute_bound",
        answer_name="decode_compute_bound",
        prompt="Decode with 64 requests: one FP16 linear layer with M = 64, K = N = 4096 on the "
               "H200's Tensor Cores. Is it compute-bound? True or False.",
        answer=False,
        kind=Exact(bool),
        wrong=[
            Wrong(True, "M = 64 is above the FP32 CUDA-core ridge (M = 29), but on Tensor Cores "
                        "the ridge is about 206 FLOP/B and M = 64 gives 62 FLOP/B: decode is "
                        "memory-bound, its time set by reading the weights."),
        ],
    ),
    Question(
        id="04.attention_scores_gib",
        answer_name="scores_gib",
        prompt="One full FP16 attention score tensor for 32 heads and T = 8192 tokens, in GiB (exact).",
        answer=lambda: attention_scores_bytes(HEADS, SEQ, 2) / GIB,
        kind=Number(unit="GiB"),
        wrong=[
            Wrong(lambda: attention_scores_bytes(HEADS, SEQ, 2) / 1e9,
                  "that is GB; in GiB (2^30 B) it is exactly 4."),
            Wrong(lambda: attention_scores_bytes(HEADS, SEQ, 4) / GIB, "FP16 is 2 bytes, not 4."),
        ],
    ),
    Question(
        id="04.pipeline_single_ms",
        answer_name="single_ms",
        prompt="4 batches, load 2 ms and compute 5 ms each, ONE input buffer: total ms (exact).",
        answer=lambda: pipeline_time(BATCHES, LOAD_MS, COMPUTE_MS, buffers=1),
        kind=Number(unit="ms"),
        wrong=[
            Wrong(lambda: pipeline_time(BATCHES, LOAD_MS, COMPUTE_MS, buffers=2),
                  "with one buffer the next load must wait until the compute has used it."),
        ],
    ),
    Question(
        id="04.pipeline_double_ms",
        answer_name="double_ms",
        prompt="The same with TWO input buffers: total ms (exact).",
        answer=lambda: pipeline_time(BATCHES, LOAD_MS, COMPUTE_MS, buffers=2),
        kind=Number(unit="ms"),
        wrong=[
            Wrong(BATCHES * COMPUTE_MS, "the first load (2 ms) cannot hide under anything."),
            Wrong(lambda: pipeline_time(BATCHES, LOAD_MS, COMPUTE_MS, buffers=1),
                  "that is one buffer; with two the loads of batches 2-4 hide under compute."),
        ],
        explain="Same bytes, same FLOPs: overlap only hides the waiting.",
    ),
    Question(
        id="04.pipeline_dependent",
        answer_name="dependent_answer",
        prompt="If each batch's input is computed from the previous batch's output, can its "
               "load still overlap the previous compute? Pick one:\n"
               + options_text(PIPELINE_DEPENDENT),
        answer="c",
        kind=Choice(tuple(PIPELINE_DEPENDENT)),
        wrong=[
            Wrong("a", "overlap needs independent work: the input does not exist until the "
                       "previous compute finishes."),
            Wrong("b", "more buffers cannot create data that has not been computed yet."),
        ],
    ),
    Question(
        id="04.roofline_function",
        answer_name="roofline_bound",
        prompt="Write roofline_bound(F, Q, P, B): the lower bound on time, in seconds, for F "
               "FLOPs and Q bytes on a machine with peak P FLOP/s and bandwidth B B/s.",
        answer=lambda F, Q, P_, B_: max(F / P_, Q / B_),
        kind=Function(cases=_roofline_cases, compare=Number(rtol=1e-9), hidden=_roofline_hidden),
        wrong=[
            Wrong(lambda F, Q, P_, B_: min(F / P_, Q / B_),
                  "the faster resource does not set the time; the slower one does: max."),
            Wrong(lambda F, Q, P_, B_: F / P_ + Q / B_,
                  "adding assumes no overlap: that is a pessimistic estimate, not the lower "
                  "bound, which assumes perfect overlap."),
        ],
    ),
    Question(
        id="04.pure_add_bound_us",
        prompt="The H200's 67 TFLOP/s FP32 peak counts a fused multiply-add (FMA) as 2 FLOPs. At "
               "least how long do 1e8 FP32 additions (no multiplies) take on its arithmetic "
               "units, in microseconds (3 significant figures)?",
        answer=lambda: N_VEC / ADD_RATE * 1e6,
        kind=Number(sig=3, unit="us"),
        wrong=[
            Wrong(lambda: N_VEC / P * 1e6,
                  "that divides by the FMA-counted peak: an FMA instruction is two FLOPs, an add "
                  "only one, so pure adds run at half the printed rate. A peak belongs to one "
                  "operation and one data type."),
        ],
    ),
    Question(
        id="04.source_loads_traffic",
        prompt="Can you count the loads in the naive loop's source and call them the measured HBM "
               "traffic? Pick one:\n" + options_text(SOURCE_LOADS),
        answer="b",
        kind=Choice(tuple(SOURCE_LOADS)),
        wrong=[
            Wrong("a", "the next output reads the same row of A again, and it is usually still in "
                       "L1 or L2: many source loads never reach HBM, while cache lines and "
                       "write-allocation can add bytes the source never names."),
            Wrong("c", "even then L1 and L2 keep the recently used row of A and lines of B, and "
                       "the hardware prefetcher fetches ahead: the real traffic still has to be "
                       "measured with counters."),
        ],
    ),
    Question(
        id="04.same_flops_faster",
        prompt="A GEMM optimisation leaves the FLOPs unchanged. Why can it still cut the time a "
               "lot? Pick one:\n" + options_text(SAME_FLOPS),
        answer="c",
        kind=Choice(tuple(SAME_FLOPS)),
        wrong=[
            Wrong("a", "the same 2.147 GFLOP take at least 1.79 ms without reuse and 32 us with "
                       "ideal reuse on the H200: the bytes, not the FLOPs, set the first bound."),
            Wrong("b", "reordering and tiling do exactly the same multiply-adds; what changes is "
                       "how often each input crosses HBM."),
        ],
    ),
    Question(
        id="04.compute_bound_traffic",
        prompt="Once a kernel's compute time F/P exceeds its transfer time Q/B, does cutting its "
               "HBM traffic further speed it up proportionally? True or False.",
        answer=False,
        kind=Exact(bool),
        wrong=[Wrong(True, "the bound is now F/P: a smaller Q/B shortens a bound that is no longer "
                           "the limit. Further gains must come from using the compute units "
                           "better.")],
    ),
    Question(
        id="04.below_slope_fix",
        prompt="A kernel's measured point sits far below the sloped (bandwidth) part of its "
               "roofline. What should you try first? Pick one:\n" + options_text(BELOW_SLOPE),
        answer="a",
        kind=Choice(tuple(BELOW_SLOPE)),
        wrong=[
            Wrong("b", "moving right helps a kernel that is already near its roof. Far below the "
                       "slope it does not even use the bandwidth it has: raise it towards the roof "
                       "at the same intensity first."),
            Wrong("c", "left of the ridge the attainable rate is B x I, whatever the compute peak: "
                       "more compute would sit idle."),
        ],
    ),
    Question(
        id="04.report_check_first",
        prompt="A report says the 1.2 GB vector add ran in 0.125 ms on a 4.8 TB/s H200 and "
               "recommends more arithmetic throughput. What do you check first? Pick one:\n"
               + options_text(REPORT_FIRST),
        answer="b",
        kind=Choice(tuple(REPORT_FIRST)),
        wrong=[
            Wrong("a", "arithmetic was never the limit of a 1/12 FLOP/B kernel, and the numbers "
                       "contradict each other (9.6 TB/s of HBM traffic): fix the measurement "
                       "before choosing a direction."),
            Wrong("c", "1.2 GB cannot sit in the H200's 50 MB L2, so at this size the cache does "
                       "not explain it; a timer that did not wait for the kernel, or a smaller "
                       "problem than stated, could."),
        ],
    ),
    Question(
        id="04.ridge_guarantee",
        prompt="A tile size puts the GEMM's intensity above the ridge point. Does that guarantee "
               "the peak FLOP/s? True or False.",
        answer=False,
        kind=Exact(bool),
        wrong=[Wrong(True, "it removes this model's bandwidth bound, nothing more. Reaching the "
                           "peak also needs enough independent work to keep every SM busy, "
                           "instructions scheduled without stalls, and tiles that respect the "
                           "separate limits of registers, shared memory and caches, which the "
                           "single abstract budget hides (lessons 05 to 11).")],
    ),
    Question(
        id="04.cpu_table_proves",
        prompt="In the recorded CPU table the tiled loops are slower than the reordered one. Does "
               "it prove that 'CPUs do not benefit from tiling and GPUs always do'? Pick one:\n"
               + options_text(CPU_TABLE),
        answer="c",
        kind=Choice(tuple(CPU_TABLE)),
        wrong=[
            Wrong("a", "one implementation, a few sizes and one machine prove nothing general: "
                       "tuned CPU libraries tile heavily, and a GPU kernel with a bad tile size "
                       "or extra synchronisation can be slower than a simpler one."),
            Wrong("b", "the five loops go through the same compiler and its vectoriser; a "
                       "difference cannot be pinned on 'only one of them uses SIMD' without "
                       "checking the generated code."),
        ],
    ),
    Question(
        id="04.cpu_followup",
        prompt="How would you tell 'the tiles did not improve cache reuse' from 'the extra loop "
               "overhead ate the gain'? Pick one:\n" + options_text(CPU_FOLLOWUP),
        answer="a",
        kind=Choice(tuple(CPU_FOLLOWUP)),
        wrong=[
            Wrong("b", "repeating reduces noise but says nothing about why a version is slow; and "
                       "keeping the fastest run hides the spread. Measure the cause: misses and "
                       "overhead separately."),
            Wrong("c", "another GFLOP/s figure is another symptom; only counting cache misses and "
                       "timing the loop structure on its own separates the two explanations."),
        ],
    ),
    Question(
        id="04.tiling_flops",
        prompt="Does tiling a GEMM reduce the number of FLOPs it performs? True or False.",
        answer=False,
        kind=Exact(bool),
        wrong=[Wrong(True, "every output still needs its K multiply-adds: 2N^3 FLOPs in any "
                           "order. Tiling changes how often each loaded element is reused, i.e. "
                           "the bytes moved.")],
    ),
    Question(
        id="04.unfused_time_ms",
        prompt="u = x + y, then z = u * w, N = 1e8, FP32, as two kernels (u written to HBM and "
               "read back): the lower bound on their time at 4.8 TB/s, in ms (exact).",
        answer=lambda: roofline_time(fusion_traffic(N_VEC)["flops"],
                                     fusion_traffic(N_VEC)["unfused_bytes"], P, B) * 1e3,
        kind=Number(unit="ms"),
        wrong=[
            Wrong(lambda: fusion_traffic(N_VEC)["fused_bytes"] / B * 1e3,
                  "that is the fused kernel (16N bytes). Unfused, u goes to HBM and back: 24N."),
            Wrong(lambda: 2 * N_VEC / P * 1e3,
                  "that is the compute bound; at 1/12 FLOP/B the bytes set the bound."),
        ],
    ),
    Question(
        id="04.fused_intensity",
        prompt="The same computation fused into one kernel (u stays on chip): its arithmetic "
               "intensity in FLOP/B (exact).",
        answer=lambda: intensity(fusion_traffic(N_VEC)["flops"], fusion_traffic(N_VEC)["fused_bytes"]),
        kind=Number(unit="FLOP/B"),
        wrong=[
            Wrong(lambda: intensity(fusion_traffic(N_VEC)["flops"],
                                    fusion_traffic(N_VEC)["unfused_bytes"]),
                  "that is the unfused pair (24N bytes); fused, only x, y, w and z cross HBM."),
            Wrong(lambda: intensity(N_VEC, fusion_traffic(N_VEC)["fused_bytes"]),
                  "fusion keeps both operations: 2N FLOPs, not N."),
        ],
    ),
    Question(
        id="04.fp16_inputs_same",
        prompt="Store x, y and w in FP16 but compute z = (x + y) * w in FP32. Are the results the "
               "same as with FP32 inputs? True or False.",
        answer=False,
        kind=Exact(bool),
        wrong=[Wrong(True, "the inputs are rounded to FP16's 11 significant bits when stored, "
                           "before any arithmetic: FP32 arithmetic cannot bring back what the "
                           "storage rounded away (the lesson measures the difference).")],
    ),
    Question(
        id="04.m_rows_meaning",
        prompt="A linear layer runs with M = 128 rows. What does M = 128 tell you? Pick one:\n"
               + options_text(M_ROWS),
        answer="b",
        kind=Choice(tuple(M_ROWS)),
        wrong=[
            Wrong("a", "[b, L, K] becomes [bL, K]: 128 rows can be 128 positions of a single "
                       "request as well as 128 requests. M alone does not count users."),
            Wrong("c", "a batch counts samples or requests, not words; and the rows are tokens, "
                       "which are not words either."),
        ],
    ),
    Question(
        id="04.batching_latency",
        prompt="Does a larger batch make each single request faster? True or False.",
        answer=False,
        kind=Exact(bool),
        wrong=[Wrong(True, "batching raises throughput by reusing each weight over more rows, but "
                           "a request may wait for its batch to fill and then shares every step "
                           "with the others: its latency can grow.")],
    ),
    Question(
        id="04.tiling_vs_recompute",
        prompt="Tiling keeps inputs on chip to reuse them; activation recomputation keeps fewer "
               "activations and computes them again. Why do these not contradict each other? "
               "Pick one:\n" + options_text(TILING_VS_RECOMPUTE),
        answer="a",
        kind=Choice(tuple(TILING_VS_RECOMPUTE)),
        wrong=[
            Wrong("b", "each is right for a different bottleneck: tiling when moving bytes is the "
                       "limit, recomputation when memory capacity is. A job can use both."),
            Wrong("c", "recomputation adds FLOPs (about one more forward pass), and tiling leaves "
                       "them unchanged: neither reduces them."),
        ],
    ),
    Question(
        id="04.flash_flops",
        prompt="Does FlashAttention reduce the FLOPs of attention? True or False.",
        answer=False,
        kind=Exact(bool),
        wrong=[Wrong(True, "it tiles and fuses: the T x T scores never go to HBM, so traffic and "
                           "memory drop, but the arithmetic stays quadratic in T (the backward "
                           "pass even recomputes some of it).")],
    ),
    Question(
        id="04.memory_bound_meaning",
        prompt="A kernel is called memory-bound. What does that mean? Pick one:\n"
               + options_text(MEMORY_BOUND),
        answer="b",
        kind=Choice(tuple(MEMORY_BOUND)),
        wrong=[
            Wrong("a", "that is bandwidth-bound, one kind of memory-bound. A kernel can also wait "
                       "on memory latency while using little of the bandwidth (too few "
                       "requests in flight)."),
            Wrong("c", "not fitting is a capacity problem (out of memory, lesson 01); memory-bound "
                       "is about speed."),
        ],
    ),
    Question(
        id="04.intensity_level",
        prompt="A kernel's arithmetic intensity is given as 10 FLOP/B. What must be said with it "
               "for it to mean anything? Pick one:\n" + options_text(INTENSITY_LEVEL),
        answer="a",
        kind=Choice(tuple(INTENSITY_LEVEL)),
        wrong=[
            Wrong("b", "the bytes depend on the memory level and on what is still cached: the "
                       "same six reads moved 24 B through a 2-line cache and 12 B through a "
                       "3-line one. Intensity pairs FLOPs with one boundary's bytes."),
            Wrong("c", "the data type changes the bytes per element, but the level the bytes cross "
                       "still has to be named."),
        ],
    ),
    Question(
        id="04.busy_sms",
        prompt=f"A GEMM with M = N = {THIN_M} and K = {THIN_K} has an ideal intensity of "
               f"{thin_gemm_intensity():.1f} FLOP/B, past the H200's FP32 ridge of "
               f"{ridge_point(P, B):.1f}: the roofline calls it compute-bound. Its kernel gives "
               f"each {THIN_TILE} x {THIN_TILE} tile of C to one block. How many of the H200's "
               f"{int(H200.sms.value)} SMs can it keep busy at once (exact)?",
        answer=busy_sms,
        kind=Exact(int),
        wrong=[
            Wrong(lambda: int(H200.sms.value),
                  f"high intensity does not make parallel work: a block runs on one SM, and this "
                  f"GEMM has only {busy_sms()} output tiles, so {busy_sms()} SMs work and "
                  f"{int(H200.sms.value) - busy_sms()} idle. The roofline assumes the whole chip "
                  f"is busy; split K or use smaller tiles to give it work."),
            Wrong(lambda: THIN_M * THIN_N // THIN_TILE,
                  f"count output tiles, one block each: ({THIN_M}/{THIN_TILE}) x "
                  f"({THIN_N}/{THIN_TILE})."),
        ],
        hint="Output tiles = ceil(M/128) x ceil(N/128), and one block per tile runs on one SM.",
        explain="The roofline says which resource would limit a kernel that fills the GPU; "
                "whether it fills the GPU is a separate question of parallel work.",
    ),
    Question(
        id="04.hgx_platform_hbm_gb",
        prompt=f"The H200 figures of this lesson ({H200.bandwidth.value / 1e12:g} TB/s, "
               f"{H200.capacity.value / 1e9:g} GB) are those of one H200 SXM GPU. An HGX H200 "
               f"board carries {HGX_GPUS} of them. How much HBM does the board hold in all, in GB "
               f"(exact)?",
        answer=lambda: HGX_GPUS * H200.capacity.value / 1e9,
        kind=Number(rtol=1e-9, unit="GB"),
        wrong=[Wrong(lambda: H200.capacity.value / 1e9,
                     "that is one GPU's memory: the datasheet table is per H200 SXM, not the "
                     "total of the eight-GPU platform (and each GPU's memory is its own: lesson "
                     "00's two cards are not one).")],
    ),
    Question(
        id="04.ikj_keeps_c_in_registers",
        prompt="The ikj loop order does the same multiply-adds as ijk, and its inner loop updates "
               "a row of C again and again. Does the ikj order by itself keep those updates of C in "
               "registers? True or False.",
        answer=False,
        kind=Exact(bool),
        wrong=[Wrong(True, "the order changes which elements come one after another (B and C "
                           "consecutively, one A element reused), not where they live: whether "
                           "C's repeated updates stay in registers or in a cache is up to the "
                           "compiler and the hardware (a row of a 1024 x 1024 C is 4 KiB, far "
                           "more than one thread's registers). Measure it.")],
    ),
    Question(
        id="04.fusion_keeps_u",
        prompt="Fusing u = x + y and z = u * w into one kernel spares u's round trip through "
               "memory. When must u still be written? Pick one:\n" + options_text(FUSION_KEEPS_U),
        answer="c",
        kind=Choice(tuple(FUSION_KEEPS_U)),
        wrong=[
            Wrong("a", "an intermediate another operator needs (a later layer that reads u, or "
                       "the backward pass) cannot be dropped; and a fused kernel needs more "
                       "registers per thread and another split of the work, which can cost "
                       "occupancy."),
            Wrong("b", f"fusion spares u's round trip through HBM: at N = 1e8 in FP32, "
                       f"{fusion_traffic(N_VEC)['unfused_bytes'] / 1e9:g} GB become "
                       f"{fusion_traffic(N_VEC)['fused_bytes'] / 1e9:g} GB, unless someone else "
                       f"needs u."),
        ],
    ),
    Question(
        id="04.tiled_softmax",
        prompt="FlashAttention computes attention one tile of scores at a time. What has to be "
               "carried from tile to tile, and is the result bit for bit the untiled one? Pick "
               "one:\n" + options_text(TILED_SOFTMAX),
        answer="a",
        kind=Choice(tuple(TILED_SOFTMAX)),
        wrong=[
            Wrong("b", "a softmax divides by the sum over the whole row: each tile's partial "
                       "maximum and sum must be merged with the others' (and the output "
                       "rescaled). And adding in another order can change the last bits."),
            Wrong("c", "keeping the whole row is what tiling avoids: a running maximum and sum "
                       "per row are enough, rescaling what was computed so far."),
        ],
    ),
    Question(
        id="04.longer_arrays_intensity",
        answer_name="longer_arrays_intensity",
        prompt='True or False: a vector add over 10x longer arrays has a higher arithmetic intensity.',
        answer=False,
        kind=Exact(bool),
        wrong=[Wrong(True, 'FLOPs and bytes both grow with the length: the vector add stays at 1/12 FLOP/B however long the arrays are. Intensity grows with reuse, not with size.')],
    ),
    Question(
        id="04.time_tells_cause",
        answer_name="time_tells_cause",
        prompt="True or False: a kernel's time alone tells whether it is below the bandwidth roof because it moves too many bytes or because the memory is not fed enough requests.",
        answer=False,
        kind=Exact(bool),
        wrong=[Wrong(True, 'the same time fits both causes: too many bytes at full bandwidth, or the right bytes at a fraction of it. Count the bytes (a model or hardware counters) to tell them apart.')],
    ),
    Question(
        id="04.tiling_starts_without_reuse",
        answer_name="tiling_starts_without_reuse",
        prompt='True or False: on a CPU, tiling is what first gives a GEMM loop any reuse at all.',
        answer=False,
        kind=Exact(bool),
        wrong=[Wrong(True, 'the reordered i-k-j loop already reuses a row of C and of B through the cache; tiling bounds the working set so that reuse survives at sizes beyond the cache.')],
    ),
]
