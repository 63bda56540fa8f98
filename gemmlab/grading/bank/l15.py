"""Lesson 15, synthesis: the unit's three synthesis exercises (a column-parallel layer feeding a
row-parallel one, the ring all-reduce's bytes, single vs double buffering) and the unit's
cross-cutting misconceptions."""
from ...collectives import ring_send_bytes
from ...parallel import shape_ledger
from ...perfmodel import pipeline_time
from ...labs.budget import BudgetLab
from ...labs.solutions import solution
from ...judging import Exact, Number, Question, Shape, Wrong

GIB = 2**30
# Exercise 1: X 32 x 4096, W 4096 x 16384, column parallel on 4 ranks.
X_SHAPE, W_SHAPE, P = (32, 4096), (4096, 16384), 4
# Exercise 2: a 1 GiB ring all-reduce on 8 ranks.
RING_RANKS, RING_BYTES = 8, GIB
# Exercise 3: 20 tiles, 6 us to load and 10 us to compute each.
TILES, LOAD_US, COMPUTE_US = 20, 6, 10


def _column():
    return shape_ledger(X_SHAPE, W_SHAPE, P)["column"]


def _send_gib():
    return ring_send_bytes(RING_RANKS, RING_BYTES) / GIB


ONCHIP_IS_CACHE = ("Is it fair to call all of a GPU's on-chip storage (registers, shared memory, "
                   "L1 and L2) its cache? True or False.")

QUESTIONS = [
    Question(
        id="15.column_W_r_shape",
        prompt="X is 32x4096, W is 4096x16384, column parallel on 4 ranks: the shape of each "
               "rank's W_r.",
        answer=lambda: _column().W_r,
        kind=Shape(),
        wrong=[
            Wrong(lambda: shape_ledger(X_SHAPE, W_SHAPE, P)["row"].W_r,
                  "that cuts W's rows (the contraction): row parallel. Column parallel cuts the "
                  "16384 output columns."),
            Wrong(W_SHAPE, "that is the whole W; each rank holds a quarter of its columns."),
        ],
        hint="K x N/p.",
        explain="All 4096 inputs, 4096 of the 16384 outputs.",
    ),
    Question(
        id="15.column_H_r_shape",
        prompt="Same layer: the shape of each rank's output H_r = X W_r.",
        answer=lambda: _column().local,
        kind=Shape(),
        wrong=[
            Wrong((32, 16384), "that is the whole output; a column shard has N/p columns."),
            Wrong((8, 16384), "column parallel does not split the tokens: every rank multiplies "
                              "the whole X."),
        ],
        hint="(32 x 4096) times W_r.",
        explain="Finished output columns: exactly the input block a row-parallel next layer needs.",
    ),
    Question(
        id="15.middle_allgather",
        prompt="The next layer is row parallel along the 16384 dimension, with an elementwise "
               "activation in between. Must the H_r be all-gathered before it? (True or False)",
        answer=False,
        kind=Exact(bool),
        wrong=[Wrong(True, "the row-parallel layer cuts its 16384 input rows into the same 4 "
                           "blocks, so rank r needs exactly its own H_r; the activation is "
                           "elementwise. Communication waits for the second layer's exit "
                           "(all-reduce or reduce-scatter).")],
        hint="Which block of the 16384 features does rank r's second-layer weight multiply?",
        explain="Column then row: one collective, at the exit.",
    ),
    Question(
        id="15.ring_send_gib",
        prompt="A ring all-reduce of a 1 GiB tensor on 8 ranks: how many GiB does each rank send "
               "(exact)?",
        answer=_send_gib,
        kind=Number(rtol=1e-6, unit="GiB"),
        wrong=[
            Wrong(2.0, "2S is the limit for many ranks. At 8 ranks it is 2 (1 - 1/8) S."),
            Wrong(lambda: _send_gib() / 2, "that is one phase (reduce-scatter or all-gather); "
                                           "the all-reduce is both."),
            Wrong(lambda: 2 * _send_gib(), "that counts what a rank sends and what it receives. "
                                           "The question asks for sending only."),
        ],
        hint="2 (N - 1) / N x S.",
        explain="Nearly constant per rank as N grows, but the number of steps, 2(N - 1), is not.",
    ),
    Question(
        id="15.ring_send_recv_gib",
        prompt="Same all-reduce: if you report bytes sent plus bytes received per rank, how many "
               "GiB is that (exact)?",
        answer=lambda: 2 * _send_gib(),
        kind=Number(rtol=1e-6, unit="GiB"),
        wrong=[
            Wrong(_send_gib, "that is sending only; in a symmetric ring each rank receives as "
                             "much as it sends."),
            Wrong(4.0, "that is 2 x 2S, the large-N limit; at 8 ranks use 2(1 - 1/8) S each way."),
        ],
        hint="Each rank receives as much as it sends.",
        explain="Always say which accounting a bandwidth figure uses.",
    ),
    Question(
        id="15.single_buffer_us",
        prompt="20 tiles, each 6 us to load and 10 us to compute. Single buffer (load, then "
               "compute, no overlap): the total time in microseconds (exact).",
        answer=lambda: pipeline_time(TILES, LOAD_US, COMPUTE_US, buffers=1),
        kind=Number(rtol=1e-6, unit="us"),
        wrong=[Wrong(TILES * COMPUTE_US, "that counts the computation only; with one buffer "
                                         "every load waits for the previous compute.")],
        hint="n (T_L + T_C).",
        explain="With one buffer, load and compute strictly alternate.",
    ),
    Question(
        id="15.double_buffer_us",
        prompt="Same 20 tiles with two buffers (ideal overlap, no extra synchronisation): the "
               "total time in microseconds (exact).",
        answer=lambda: pipeline_time(TILES, LOAD_US, COMPUTE_US, buffers=2),
        kind=Number(rtol=1e-6, unit="us"),
        wrong=[
            Wrong(TILES * max(LOAD_US, COMPUTE_US), "that is the steady state alone. The first "
                                                    "load overlaps nothing (the fill)."),
            Wrong(lambda: pipeline_time(TILES, LOAD_US, COMPUTE_US, buffers=1),
                  "that is the single-buffer time: with two buffers the next load runs during "
                  "the current compute."),
        ],
        hint="T_L + (n - 1) max(T_L, T_C) + T_C.",
        explain="Fill, steady state, drain. Real kernels also pay for barriers, buffer space and "
                "occupancy.",
    ),
    Question(
        id="15.double_buffer_fewer_bytes",
        prompt="Does double buffering reduce the bytes a GEMM loads from HBM? (True or False)",
        answer=False,
        kind=Exact(bool),
        wrong=[Wrong(True, "double buffering moves the same bytes and does the same FLOPs; it "
                           "overlaps loading with computing, paid for with more on-chip memory. "
                           "Tiling is what cuts the bytes.")],
        hint="What changes with a second buffer: the amount loaded, or when it is loaded?",
        explain="Tiles cut traffic; buffers hide latency.",
    ),
    Question(
        id="15.tensor_core_whole_gemm",
        prompt="A Tensor Core executes a whole large GEMM by itself, so tiling and data movement "
               "no longer matter. (True or False)",
        answer=False,
        kind=Exact(bool),
        wrong=[Wrong(True, "a Tensor Core does one small fragment multiply-add (e.g. 16x16x16 per "
                           "warp). Tiles still have to be brought from HBM to shared memory and "
                           "into registers, accumulated over K and written back.")],
        hint="What size is one MMA operation?",
        explain="Tensor Cores are the micro-kernel's hardware, not the whole pipeline.",
    ),
    Question(
        id="15.lab_budget",
        prompt="Lab: write layer_budget(cfg), the time of one tensor-parallel FFN layer per GPU "
               "and microbatch on a 4D grid, as a dict with the keys 'gemm', 'tp_allreduce', "
               "'dp_allreduce' and 'pp_p2p' (seconds), following the contract in the exercise "
               "notebook (the docstring of gemmlab.parallel.budget).",
        answer=lambda: solution("15.lab_budget", name="layer_budget"),
        kind=BudgetLab(),
        answer_name="layer_budget",
        hint="Take the four terms one at a time: M = tokens / cp, f = d_ff / tp; six GEMMs with "
             "the tiled traffic; two TP all-reduces; the dp x cp gradient all-reduce over "
             "microbatches; two stage-boundary messages over layers / pp.",
        explain="The budget puts each parallelism's traffic on its link: TP's all-reduces on "
                "NVLink every layer, the gradients once per step, the pipeline's messages once "
                "per stage.",
    ),
    Question(
        id="15.onchip_is_cache",
        prompt=ONCHIP_IS_CACHE,
        answer=False,
        kind=Exact(bool),
        wrong=[Wrong(True, "a cache is filled and emptied by the hardware; shared memory and "
                           "registers are managed by the program: the kernel moves each tile into "
                           "them explicitly, synchronises the block around them and sizes its tiles "
                           "to their capacity. Calling them cache hides those three jobs.")],
    ),
]
