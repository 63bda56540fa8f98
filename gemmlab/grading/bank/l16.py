"""Lesson 16, fused attention: what S costs in memory, the FLOPs fusion adds, causal tiles,
the overflow without the max, the backward pass's recomputation, heads across ranks; the three
misconceptions the lesson answers; two warm-up puzzles (online softmax, the (m, l) merge) and
the lab, the fused forward kernel."""
import math

from ...attention import attention_flops, attention_traffic, kv_tiles_visited
from ...labs.attention_lab import FLASH, MERGE, ONLINE_SOFTMAX
from ...labs.solutions import solution
from ._choices import options_text
from ...judging import Choice, Exact, Number, Question, Wrong

N, D = 4096, 128                     # the lesson's sizes: one head of a long-context layer
BR, BC = 128, 64                     # a fused kernel's query and K/V tiles at d = 128
MIB = 2 ** 20
FP16_MAX = 65504.0                   # the largest finite float16


def unfused_mib():
    return attention_traffic(1, 1, N, D, "unfused") / MIB


def cached_ratio():
    return attention_traffic(1, 1, N, D, "unfused") / attention_traffic(1, 1, N, D, "fused",
                                                                        kv_cached=True)


def extra_flops_percent():
    fused, unfused = (attention_flops(1, 1, N, D, v, Bc=BC) for v in ("fused", "unfused"))
    return 100 * (fused - unfused) / unfused


FEWER_FLOPS = {
    "a": "yes: S is never written to HBM, so the separate softmax kernel's passes over it (the "
         "max, the exponentials, the sums) are skipped, and the FLOPs go down with the bytes",
    "b": "no: the same two products and the same softmax are computed, plus the rescaling of l "
         "and acc at every K/V tile; what fusion saves is memory traffic, not arithmetic",
    "c": "yes: tiling Q, K and V lets each operand be reused from shared memory, which removes "
         "the redundant multiply-adds of the two unfused products, about half of them",
}
WHOLE_ROW = {
    "a": "yes: the max must be known before the first exponential is taken, so every score of "
         "the row has to be computed and stored first, which is why S is written out",
    "b": "yes, but for causal rows only: the mask decides which of the scores count, so a causal "
         "row must see all of its scores before its first exponential",
    "c": "no: a running max and sum are enough, rescaled by exp(m_old - m_new) when the max "
         "grows, so one pass over the K/V tiles gives exactly the row's softmax",
}
SPEEDUP = {
    "a": "not writing S and P to HBM and reading them back: the unfused traffic grows as N^2, "
         "the fused kernel's is Q, K, V and O, and it is no longer memory-bound",
    "b": "the Tensor Cores: the fused kernel runs its two products on them, while the unfused "
         "kernels compute Q K^T and P V on the ordinary CUDA cores, in FP32 throughout",
    "c": "fewer FLOPs: the fused kernel skips the softmax kernel's separate passes over S, so "
         "it does less arithmetic per head than the three unfused kernels",
}
RECOMPUTE = {
    "a": "P cannot be stored: the forward pass does not compute P as a whole, only the running "
         "max and the running sum of each row, so there is no P to keep for the backward pass",
    "b": "recomputing S and P tile by tile from Q, K and the log-sum-exp costs FLOPs, which the "
         "GPU has in plenty; storing P costs N^2 elements per head in HBM, which it has not",
    "c": "the backward pass does not need P: the gradients dQ, dK and dV follow from Q, K, V, O "
         "and dO through the chain rule, with no softmax weights involved",
}

QUESTIONS = [
    Question(
        id="16.unfused_mib",
        prompt=f"gl.attention.attention_traffic counts the bytes of attention's forward pass. "
               f"For one head at N = {N}, d = {D}, FP16 (2 bytes), how many MiB does the "
               f"unfused version (S and P written to HBM and read back) move? (3 significant "
               f"figures)",
        answer=unfused_mib,
        kind=Number(sig=3, rtol=5e-3, unit="MiB"),
        wrong=[
            Wrong(lambda: N * N * 2 / MIB, "32 MiB is S alone, written once. The unfused "
                                           "version writes S, reads it, writes P, reads P: four "
                                           "N x N tensors, plus Q, K, V read and O written."),
            Wrong(lambda: 4 * N * N * 2 / MIB, "that is the four passes over S and P, but Q, K "
                                               "and V are read and O written too: 4 N d more."),
        ],
        hint="4 N d + 4 N^2 elements of 2 bytes.",
    ),
    Question(
        id="16.cached_ratio",
        prompt=f"With K and V held in the L2 cache (each read once), the fused version moves "
               f"only Q, K, V and O. By what factor does it cut the unfused bytes at N = {N}, "
               f"d = {D}? (3 significant figures)",
        answer=cached_ratio,
        kind=Number(sig=3, rtol=5e-3, unit="x"),
        wrong=[
            Wrong(lambda: attention_traffic(1, 1, N, D, "unfused")
                  / attention_traffic(1, 1, N, D, "fused", Br=BR, Bc=BC),
                  "that counts every K/V re-read (once per query tile of 128 rows) as HBM "
                  "traffic: the worst case. The question holds K and V in the cache."),
        ],
        hint="(4 N d + 4 N^2) / (4 N d) = 1 + N / d.",
    ),
    Question(
        id="16.extra_flops_percent",
        prompt=f"gl.attention.attention_flops counts the FLOPs of both versions. At N = {N}, "
               f"d = {D}, K/V tiles of {BC} rows, by how many percent does the fused version "
               f"exceed the unfused one? (2 significant figures)",
        answer=extra_flops_percent,
        kind=Number(sig=2, rtol=2e-2, unit="%"),
        wrong=[
            Wrong(0, "the rescaling is extra work: at every K/V tile each row multiplies l and "
                     "its d accumulators by exp(m - m'). Small, but not zero."),
        ],
        hint="The fused version adds N ceil(N / Bc) (d + 3) FLOPs and replaces N^2 divisions "
             "by N d.",
    ),
    Question(
        id="16.fewer_flops",
        prompt="Does fused attention do fewer FLOPs than the unfused three kernels? Pick one:\n"
               + options_text(FEWER_FLOPS),
        answer="b",
        kind=Choice(tuple(FEWER_FLOPS)),
        wrong=[
            Wrong("a", "the misconception that fused attention does fewer FLOPs: the softmax's "
                       "max, exponentials and sums are all still computed, on chip, plus the "
                       "rescaling. What disappears is the traffic of S and P."),
            Wrong("c", "the misconception that fused attention does fewer FLOPs: tiling changes "
                       "where operands come from, not how many multiply-adds there are "
                       "(4 N^2 d for the two products either way)."),
        ],
    ),
    Question(
        id="16.whole_row_first",
        prompt="Does a row's softmax need all its scores before any output can be accumulated? "
               "Pick one:\n" + options_text(WHOLE_ROW),
        answer="c",
        kind=Choice(tuple(WHOLE_ROW)),
        wrong=[
            Wrong("a", "the misconception that softmax needs the whole row first: the online "
                       "softmax subtracts the running max, and when a larger score arrives it "
                       "multiplies the sum and the accumulator by exp(m_old - m_new); the "
                       "result is exactly the softmax."),
            Wrong("b", "the misconception that softmax needs the whole row first, for causal "
                       "rows: the mask only removes scores; the running max and sum work the "
                       "same."),
        ],
    ),
    Question(
        id="16.speedup_source",
        prompt="Where does fused attention's speed-up over the unfused kernels come from? Pick "
               "one:\n" + options_text(SPEEDUP),
        answer="a",
        kind=Choice(tuple(SPEEDUP)),
        wrong=[
            Wrong("b", "the misconception that the speed-up comes from Tensor Cores: the "
                       "unfused version's two products run on Tensor Cores too (they are "
                       "GEMMs, lesson 12). Fusion removes the N^2 traffic of S and P."),
            Wrong("c", "fused attention does not do fewer FLOPs: the softmax's passes still "
                       "happen, on chip, plus the rescaling, so it does a little more. The "
                       "saving is bytes."),
        ],
    ),
    Question(
        id="16.causal_pairs",
        prompt=f"Causal attention at N = {N} with query and K/V tiles of {BR} rows: how many "
               f"(query tile, K/V tile) pairs does a fused kernel compute (tiles wholly after "
               f"the query tile's last row skipped)?",
        answer=lambda: kv_tiles_visited(N, BR, BR, causal=True),
        kind=Exact(int, unit="pairs"),
        wrong=[
            Wrong(lambda: kv_tiles_visited(N, BR, BR), "that is every pair: the tiles above the "
                                                       "diagonal are wholly masked and skipped."),
            Wrong(lambda: kv_tiles_visited(N, BR, BR) // 2,
                  "the diagonal tiles are only half masked: they are computed, masked inside. "
                  "T (T + 1) / 2 pairs for T tiles."),
        ],
        hint="Query tile k needs K/V tiles 0 .. k.",
    ),
    Question(
        id="16.fp16_exp_limit",
        prompt="Above which score s does exp(s) overflow in float16 (largest finite value "
               "65504)? (3 significant figures)",
        answer=lambda: math.log(FP16_MAX),
        kind=Number(sig=3, rtol=5e-3),
        wrong=[
            Wrong(lambda: math.log(3.4028234663852886e38), "88.7 is float32's limit. float16's "
                                                           "largest value is 65504."),
        ],
        hint="ln(65504).",
    ),
    Question(
        id="16.p_over_lse",
        prompt=f"The backward pass needs P. Stored, P of one head at N = {N} in FP16 takes "
               f"N^2 x 2 bytes; FlashAttention stores one float32 per row instead (the "
               f"log-sum-exp m + log l) and recomputes P. By what factor is the stored state "
               f"smaller?",
        answer=lambda: (N * N * 2) // (N * 4),
        kind=Exact(int, unit="x"),
        wrong=[Wrong(N, "the stored statistic is a float32 (4 bytes), P's elements FP16 (2).")],
    ),
    Question(
        id="16.why_recompute",
        prompt="Why does the backward pass recompute S and P rather than store P? Pick one:\n"
               + options_text(RECOMPUTE),
        answer="b",
        kind=Choice(tuple(RECOMPUTE)),
        wrong=[
            Wrong("a", "the forward pass does compute P, tile by tile, on chip; it just never "
                       "writes it out."),
            Wrong("c", "dV = P^T dO and dS needs P: the backward pass does need it."),
        ],
    ),
    Question(
        id="16.comm_inside_attention",
        prompt="Lesson 14 splits 32 heads over 4 tensor-parallel ranks. How many bytes does a "
               "rank send to other ranks while it runs fused attention on its 8 heads (between "
               "its Q/K/V projection and its rows of W_O)?",
        answer=0,
        kind=Exact(int, unit="bytes"),
        wrong=[
            Wrong(lambda: N * D * 2, "heads are independent: a rank's heads need only its own "
                                     "columns of Q, K and V. The one all-reduce comes after "
                                     "W_O, as in lesson 14."),
        ],
    ),
    Question(
        id="16.puzzle_online_softmax",
        prompt="Write puzzle_online_softmax(x, out): out[i, :] = softmax(x[i, :]) for an R x n "
               "x, one thread per row (blocks of 32 threads), the row's max and sum kept "
               "running in one pass, x read at most twice per element.",
        answer=lambda: solution("16.puzzle_online_softmax"),
        kind=ONLINE_SOFTMAX,
        explain="The max and the sum came from one pass: the sum was rescaled each time the max "
                "grew.",
    ),
    Question(
        id="16.puzzle_merge",
        prompt="Write puzzle_merge(x, out): out[0] = max of x (n <= 256), out[1] = the sum of "
               "exp(x - out[0]); one block of 256 threads merging (m, l) pairs in shared memory, "
               "level by level.",
        answer=lambda: solution("16.puzzle_merge"),
        kind=MERGE,
        explain="Two partial states merge into one: the blocks of a split row (or the threads of "
                "one) can be combined in any order.",
    ),
    Question(
        id="16.lab_flash",
        prompt="Write lab_flash(Q, K, V, O, causal): O = softmax(Q K^T / sqrt(d)) V, fused: "
               "blocks of 8 threads, one query row each; K/V tiles of 8 rows through shared "
               "memory; the output accumulated in registers with the online softmax; causal "
               "(0 or 1) masks keys j > i and skips the tiles wholly after the block's rows.",
        answer=lambda: solution("16.lab_flash"),
        kind=FLASH,
        explain="S never left the chip: each K/V tile was loaded once per block of 8 rows, "
                "not once per row.",
    ),
]
