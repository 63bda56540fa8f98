"""What each code question of the bank allows its answer (:class:`gemmlab.judging.allow.Allows`),
by question id, with the reason for each thing handed out.

It lives beside the bank, not in it, because a graded run's code worker sees a bank without
references (the grader's withheld bank) and must still build the question's namespace: the
bank applies these declarations when it loads (their sentence goes into each prompt), and
:mod:`gemmlab.grading.answer` reads them wherever an answer is loaded.
"""
from .. import collectives, parallel, perfmodel
from ..judging.allow import ELEMENTWISE_NP, KERNEL, PLAIN, Allows, Facade, facade, numpy_ops, remote


def _wmma():
    from ..labs import wmma
    return remote("gemmlab.labs.wmma", wmma.CALLS, "the fragment calls; A, B, C and the "
                  "fragments stay with the judge, which does each call", wmma.FRAGMENT_SEEN)


# naive_matmul is the product's loops: its arrays are stand-ins that read and write one element
# (the answer runtime's Cells), and np gives only the zeroed output and the inputs' shapes.
ELEMENT_LOOPS = Allows(gives={"np": numpy_ops(
    ("zeros", "shape"), "the output's zeros and the inputs' shapes; every product is written out",
    **ELEMENTWISE_NP)}, standins="cells", loops=3, matmul=False)

# The tensor-parallel layers are blocks and their products: NumPy cuts and joins, @ multiplies;
# the package's column_parallel / row_parallel are not there.
BLOCK_PRODUCTS = Allows(gives={"np": numpy_ops(
    ("split", "array_split", "concatenate", "hstack", "vstack", "zeros"),
    "cutting X and W into blocks and joining outputs; @ for each block's product")})

# The ring lab moves chunks through comm.sendrecv: NumPy only cuts x into chunks and joins them
# (no gl: the package's rings are what the lab asks for).
RING_CHUNKS = Allows(gives={"np": numpy_ops(
    ("array_split", "split", "concatenate", "zeros", "zeros_like", "empty_like", "copy"),
    "cutting x into n chunks and joining them; the sums travel through comm")})

# A rank's part of the FFN: its block of each weight, its products (@) and GELU, not the
# package's megatron_ffn.
FFN_PARTS = Allows(gives={
    "np": numpy_ops(("split", "array_split"),
                    "cutting the weights into per-rank blocks; @ for their products"),
    "gl": facade("gl", {"parallel": Facade("gl.parallel", {"gelu": parallel.gelu},
                                           "the FFN's activation")},
                 "the FFN's activation")})

# One MMA step is a 16 x 16 product at float64 rounded to float32: NumPy's casts and @, not the
# package's mma.
MMA_STEP = Allows(gives={"np": numpy_ops(("float16", "float32", "float64", "asarray"),
                                         "the casts of an MMA's precisions; @ for the product")})

# The WMMA lab's answer is fragment calls: the lab's wmma calls, which the judge does (its
# arguments and fragments are handles in the answer runtime), no @, no np, no gl.
WMMA_CALLS = Allows(imports={"gemmlab.labs.wmma": _wmma}, standins="handles", matmul=False)

# A rank's heads: its columns of W_Q, W_K, W_V (slices), its rows of W_O, the products (@) and
# the lesson's attention of a group of heads, not the package's megatron_attention.
HEAD_PARTS = Allows(gives={
    "np": numpy_ops(("split", "array_split", "concatenate"),
                    "cutting weights into per-rank blocks; @ and slices for the rest"),
    "gl": facade("gl", {"parallel": Facade("gl.parallel",
                                           {"head_attention": parallel.head_attention},
                                           "attention of a group of heads")},
                 "attention of a group of heads")})

# The budget's terms come from the course's cost models; the package's layer_budget is not there.
BUDGET_TERMS = Allows(gives={"gl": facade("gl", {
    "perfmodel": Facade("gl.perfmodel", {n: getattr(perfmodel, n) for n in (
        "gemm_traffic", "gemm_flops", "roofline_time", "message_time")}, "the cost models"),
    "collectives": Facade("gl.collectives", {"allreduce_time": collectives.allreduce_time},
                          "the all-reduce's cost"),
    "parallel": Facade("gl.parallel", {"RankGrid": parallel.RankGrid}, "rank coordinates")},
    "the lessons' cost models and rank grid")})

KERNELS = ("03.puzzle_map", "03.puzzle_zip", "03.puzzle_map2d", "03.puzzle_broadcast",
           "03.puzzle_shared", "03.puzzle_pool", "03.puzzle_dot", "03.puzzle_prefix",
           "05.lab_naive", "05.lab_tiled", "08.lab_pingpong", "10.lab_outer", "11.lab_twolevel",
           "16.puzzle_online_softmax", "16.puzzle_merge", "16.lab_flash")
PLAIN_PYTHON = ("02.row_major_index", "03.amdahl_function", "04.roofline_function",
                "07.rs_send_chunk", "10.slots_m_n", "13.coords_of", "13.lab_groups")

ALLOWS = {**dict.fromkeys(KERNELS, KERNEL), **dict.fromkeys(PLAIN_PYTHON, PLAIN),
          "02.naive_matmul": ELEMENT_LOOPS,
          "06.row_partials": BLOCK_PRODUCTS, "06.lab_column": BLOCK_PRODUCTS,
          "06.lab_row": BLOCK_PRODUCTS,
          "07.lab_ring": RING_CHUNKS,
          "09.rank_partial": FFN_PARTS, "09.lab_ffn": FFN_PARTS,
          "12.mma_step": MMA_STEP, "12.lab_wmma": WMMA_CALLS,
          "14.rank_partial_attention": HEAD_PARTS, "14.lab_attention": HEAD_PARTS,
          "15.lab_budget": BUDGET_TERMS}
