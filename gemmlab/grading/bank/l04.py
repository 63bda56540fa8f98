"""Lesson 04, roofline and data movement: FLOP vs FLOP/s, intensity, the H200 roofline, GEMM
traffic models, an LRU cache, tiling, fusion, batch size, attention memory and pipelines."""
import numpy as np

from ...perfmodel import (attention_scores_bytes, chip, effective_bandwidth, fusion_traffic,
                          gemm_flops, gemm_storage_bytes, gemm_traffic, intensity,
                          linear_intensity, pipeline_time, ridge_point, roofline_time, simulate,
                          tile_workspace_bytes, vector_add_counts)
from ..question import Array, Choice, Exact, Function, Number, Question, Wrong

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


def _block_inputs(model):
    """Input elements the 2x2 block of C = TILE_A TILE_B loads: the block is a 2 x 2 x 8 GEMM of
    its own, with 2x2 tiles; the traffic model counts elements (itemsize 1) and C's 4 writes."""
    K = TILE_A.shape[1]
    tile = {"tiled": 2}.get(model)
    return gemm_traffic(2, 2, K, model, itemsize=1, tile=tile) - 2 * 2


def _roofline_cases():
    rng = np.random.default_rng(4)
    return [tuple(float(v) for v in rng.uniform(1, 1e3, size=4)) for _ in range(6)]


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
        prompt="With K = N = 4096 FP32, the smallest M whose intensity exceeds the H200's FP32 "
               "ridge point.",
        answer=_smallest_m_over_ridge,
        kind=Exact(int, unit="rows"),
        wrong=[
            Wrong(28, "at M = 28 the intensity is about 13.8 FLOP/B, still below 13.96."),
        ],
    ),
    Question(
        id="04.attention_scores_gib",
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
        prompt="If each batch's input is computed from the previous batch's output, can its "
               "load still overlap the previous compute? 'a': yes, as before; 'b': no, the load "
               "must wait for that output; 'c': only with three buffers.",
        answer="b",
        kind=Choice(["a", "b", "c"]),
        wrong=[
            Wrong("a", "overlap needs independent work: the input does not exist until the "
                       "previous compute finishes."),
            Wrong("c", "more buffers cannot create data that has not been computed yet."),
        ],
    ),
    Question(
        id="04.roofline_function",
        prompt="Write roofline_bound(F, Q, P, B): the lower bound on time, in seconds, for F "
               "FLOPs and Q bytes on a machine with peak P FLOP/s and bandwidth B B/s.",
        answer=lambda F, Q, P_, B_: max(F / P_, Q / B_),
        kind=Function(cases=_roofline_cases, compare=Number(rtol=1e-9)),
        wrong=[
            Wrong(lambda F, Q, P_, B_: min(F / P_, Q / B_),
                  "the faster resource does not set the time; the slower one does: max."),
            Wrong(lambda F, Q, P_, B_: F / P_ + Q / B_,
                  "adding assumes no overlap: that is a pessimistic estimate, not the lower "
                  "bound, which assumes perfect overlap."),
        ],
    ),
]
