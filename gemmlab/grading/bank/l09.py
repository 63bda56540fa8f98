"""Lesson 09, Megatron's FFN: per-rank shapes of D -> 4D -> D, where the one all-reduce sits, the
bias trap, the traffic of an all-gather in the middle, and the limits (backward, SwiGLU)."""
import numpy as np

from ...parallel import (ffn_allgather_in_middle, ffn_bias_on_every_rank, ffn_reference, gelu,
                         megatron_ffn, megatron_ffn_backward, split_columns, split_rows)
from ...labs.solutions import solution
from ...labs.tensor import FFNLab
from ...judging import Choice, Exact, Function, Number, Question, Shape, Wrong


# The seed's exercise: M = 16 tokens, D = 1024, a D -> 4D -> D GELU FFN on p = 4 ranks.
M, D, P = 16, 1024, 4
F = 4 * D


def _tiny_ffn(p=P, seed=909):
    """A small random FFN with the exercise's 4x expansion and rank count, to measure on."""
    rng = np.random.default_rng(seed)
    d = 2 * p
    return (rng.standard_normal((p, d)), rng.standard_normal((d, 4 * d)) / d,
            rng.standard_normal((4 * d, d)) / d, rng.standard_normal(d))


def _bias_error_copies():
    X, W_up, W_down, b = _tiny_ffn()
    excess = ffn_bias_on_every_rank(X, W_up, W_down, P, b).outputs[0] - \
        megatron_ffn(X, W_up, W_down, P, b_down=b).outputs[0]
    return int(round(float(np.median(excess / b))))


def _gather_ratio():
    X, W_up, W_down, _ = _tiny_ffn()
    lean = megatron_ffn(X, W_up, W_down, P).comm.sent_per_rank()[0]
    return ffn_allgather_in_middle(X, W_up, W_down, P).comm.sent_per_rank()[0] / lean


def _train_step_allreduces():
    X, W_up, W_down, _ = _tiny_ffn()
    dY = np.ones((X.shape[0], W_down.shape[1]))
    return (len(megatron_ffn(X, W_up, W_down, P).comm)
            + len(megatron_ffn_backward(X, W_up, W_down, dY, P).comm))


def rank_partial(X, W_up, W_down, p, r):
    """Rank r's partial sum in Megatron's FFN: GELU(X W_up,r) W_down,r."""
    return gelu(X @ split_columns(W_up, p)[r]) @ split_rows(W_down, p)[r]


def _rank_partial_cases():
    rng = np.random.default_rng(990)
    cases = []
    for (m, d, p, r) in [(3, 4, 2, 1), (5, 6, 4, 0), (2, 8, 4, 3)]:
        cases.append((rng.standard_normal((m, d)), rng.standard_normal((d, 4 * d)) / d,
                      rng.standard_normal((4 * d, d)) / d, p, r))
    return cases


def _rank_partial_hidden(rng):
    cases = []
    for _ in range(3):
        p = int(rng.choice([2, 4, 8]))
        m, d = int(rng.integers(1, 7)), p * int(rng.integers(1, 3))
        cases.append((rng.standard_normal((m, d)), rng.standard_normal((d, 4 * d)) / d,
                      rng.standard_normal((4 * d, d)) / d, p, int(rng.integers(p))))
    return cases


def _no_gelu(X, W_up, W_down, p, r):
    return X @ split_columns(W_up, p)[r] @ split_rows(W_down, p)[r]


def _whole_ffn(X, W_up, W_down, p, r):
    return ffn_reference(X, W_up, W_down)


SHAPE_HINT = "Column-parallel W_up: D x 4D/p. Row-parallel W_down: 4D/p x D."

QUESTIONS = [
    Question(
        id="09.Wup_r_shape",
        prompt="FFN D -> 4D -> D with M = 16, D = 1024 on 4 ranks: the shape of each rank's block "
               "of the up projection, W_up,r.",
        answer=lambda: split_columns(np.empty((D, F), np.int8), P)[0].shape,
        kind=Shape(),
        wrong=[
            Wrong((D, F), "that is the whole W_up (1024 x 4096): each rank holds only its 4D/p "
                          "hidden features."),
            Wrong((D // P, F), "that cuts W_up's rows, the input D: row parallel, which would need "
                               "X cut too and give partial sums. The up projection is column "
                               "parallel: it cuts the 4D outputs."),
        ],
        hint=SHAPE_HINT,
        explain="All D inputs, 4D/p = 1024 of the hidden outputs.",
    ),
    Question(
        id="09.Z_r_shape",
        prompt="Same FFN (M = 16, D = 1024, 4 ranks): the shape of each rank's up-projection output "
               "Z_r = X W_up,r.",
        answer=lambda: (M, split_columns(np.empty((D, F), np.int8), P)[0].shape[1]),
        kind=Shape(),
        wrong=[
            Wrong((M, F), "Z_r is not the whole intermediate activation: it holds only 4D/p = "
                          "1024 of the 4096 hidden features."),
            Wrong((M // P, F), "the tokens are not split: every rank multiplies the whole X."),
        ],
        hint="Z_r = X W_up,r: (16 x 1024) times W_up,r.",
        explain="GELU then runs on this shard as it is: H_r has the same shape.",
    ),
    Question(
        id="09.Wdown_r_shape",
        prompt="Same FFN: the shape of each rank's block of the down projection, W_down,r.",
        answer=lambda: split_rows(np.empty((F, D), np.int8), P)[0].shape,
        kind=Shape(),
        wrong=[
            Wrong((F, D // P), "that splits W_down by columns. A column-split W_down needs all 4D "
                               "hidden features on every rank, so it cannot take H_r as it is. "
                               "The down projection is row parallel."),
            Wrong((F, D), "that is the whole W_down: each rank holds only the 4D/p rows that "
                          "multiply its own hidden features."),
        ],
        hint=SHAPE_HINT,
        explain="Its 1024 rows line up with the 1024 columns of H_r: the contraction matches.",
    ),
    Question(
        id="09.P_r_shape",
        prompt="Same FFN: the shape of each rank's down-projection result P_r = H_r W_down,r.",
        answer=lambda: (M, D),
        kind=Shape(),
        wrong=[
            Wrong((M, D // P), "that would be a column shard. P_r is a partial sum: Y's full "
                               "width D, holding only this rank's hidden features' share."),
            Wrong((M, F), "P_r is the output of the down projection: back to the model width D."),
        ],
        hint="(16 x 1024) times W_down,r.",
        explain="Four same-shape partial sums: one sum all-reduce at the exit.",
    ),
    Question(
        id="09.middle_comm",
        prompt="Between the up projection and the down projection (around GELU), which "
               "communication does Megatron's FFN need: 'none', 'all-gather' or 'all-reduce'?",
        answer="none",
        kind=Choice(("none", "all-gather", "all-reduce")),
        wrong=[
            Wrong("all-gather", "gathering after every column-parallel layer is a reflex, not a "
                                "need: GELU is elementwise and the row-parallel down projection "
                                "wants exactly the shard each rank has."),
            Wrong("all-reduce", "Z_r and H_r are finished hidden features, not partial sums: "
                                "there is nothing to add up in the middle."),
        ],
        hint="What does GELU need from other ranks? What does W_down,r multiply?",
        explain="The first layer's output layout is the second layer's input layout.",
    ),
    Question(
        id="09.exit_collective",
        prompt="At the FFN's exit, every rank needs the full Y. Which collective: 'all-gather', "
               "'all-reduce' or 'reduce-scatter'?",
        answer="all-reduce",
        kind=Choice(("all-gather", "all-reduce", "reduce-scatter")),
        wrong=[
            Wrong("all-gather", "all-gather concatenates. Each P_r is M x D already; "
                                "concatenating them gives M x pD. Partial sums are added."),
            Wrong("reduce-scatter", "a reduce-scatter leaves each rank only a slice of Y; that "
                                    "fits sequence parallelism, but here every rank needs all of "
                                    "Y."),
        ],
        hint="The P_r are partial sums, and everyone needs the total.",
        explain="Sum, and give the sum to everyone.",
    ),
    Question(
        id="09.bias_error_copies",
        prompt="On 4 ranks, every rank adds the full down-projection bias b to its partial sum "
               "before the all-reduce. Y comes out wrong by how many copies of b?",
        answer=_bias_error_copies,
        kind=Exact(int),
        wrong=[
            Wrong(4, "the sum contains 4 copies, but the right Y contains one: the error is the "
                     "p - 1 = 3 extra ones."),
            Wrong(0, "adding b is fine for shards, not for partial sums: the all-reduce adds the "
                     "ranks' copies of b together."),
        ],
        hint="sum over r of (P_r + b) = ?",
        explain="Add b once, after the reduction.",
    ),
    Question(
        id="09.gather_traffic_ratio",
        prompt="D -> 4D -> D FFN on 4 ranks: building it layer by layer with an all-gather after "
               "the up projection (and the exit all-reduce) sends how many times the bytes per "
               "rank of Megatron's layout (exact)?",
        answer=_gather_ratio,
        kind=Number(rtol=1e-6),
        wrong=[
            Wrong(2.0, "2 is the all-gather alone compared with the all-reduce; the exit "
                       "all-reduce still runs, so add it: 2 + 1."),
            Wrong(5.0, "that counts the all-gather as two ring passes; an all-gather is one pass "
                       "(an all-reduce is two)."),
        ],
        hint="All-gather of the M x 4D activation: (p-1)/p x 4S. Exit all-reduce: 2(p-1)/p x S.",
        explain="Same result, three times the traffic.",
    ),
    Question(
        id="09.train_step_allreduces",
        prompt="How many all-reduces does one tensor-parallel FFN need in a training step, "
               "forward plus backward (no biases, no sequence parallelism)?",
        answer=_train_step_allreduces,
        kind=Exact(int),
        wrong=[
            Wrong(1, "one is the forward pass. In the backward, dX = sum over ranks of "
                     "dZ_r W_up,r^T is a sum over hidden features: a second all-reduce."),
            Wrong(3, "the weight gradients are local (H_r^T dY and X^T dZ_r use only rank r's "
                     "shards); only dX needs one in the backward."),
        ],
        hint="Which gradients need every rank's hidden features?",
        explain="'One communication' describes the forward path only.",
    ),
    Question(
        id="09.swiglu_same_split",
        prompt="In a SwiGLU FFN, H = SiLU(X W_gate) * (X W_up). Must W_gate and W_up be split "
               "over the same hidden columns on each rank? (True or False)",
        answer=True,
        kind=Exact(bool),
        wrong=[Wrong(False, "the elementwise product multiplies gate feature j by up feature j: "
                            "they must live on the same rank, or the product needs "
                            "communication (or is silently wrong).")],
        hint="Which entries does the elementwise product pair up?",
        explain="Split gate and up alike, then everything stays local.",
    ),
    Question(
        id="09.rank_partial",
        prompt="Write rank_partial(X, W_up, W_down, p, r): rank r's partial sum "
               "GELU(X W_up,r) W_down,r in Megatron's FFN.",
        answer=rank_partial,
        kind=Function(_rank_partial_cases, hidden=_rank_partial_hidden),
        wrong=[
            Wrong(_no_gelu, "GELU is missing: it runs on each rank's shard before the down "
                            "projection."),
            Wrong(_whole_ffn, "that is the whole FFN's output. Rank r uses only its own 4D/p "
                              "hidden features."),
        ],
        hint="np.split(W_up, p, axis=1)[r] and np.split(W_down, p, axis=0)[r]; "
             "gl.parallel.gelu is the activation.",
        explain="Add the p partial sums and you have Y.",
    ),
    Question(
        id="09.lab_ffn",
        prompt="Lab: write ffn_rank(comm, X, W_up_r, b_up_r, W_down_r, b_down), one rank of "
               "Megatron's FFN Y = GELU(X W_up + b_up) W_down + b_down: X (M x D) is the whole "
               "input, W_up_r (D x F/p) and b_up_r (F/p) this rank's column shard, W_down_r "
               "(F/p x D) its row shard, b_down (D) the whole bias. Return the whole M x D output "
               "on every rank, using gl.parallel.gelu and comm.all_reduce.",
        answer=lambda: solution("09.lab_ffn", name="ffn_rank"),
        kind=FFNLab(),
        answer_name="ffn_rank",
        hint="Column-parallel up projection with its bias slice, GELU on the shard, row-parallel "
             "down projection, one all-reduce, then the down bias once.",
        explain="One all-reduce of M x D per forward pass: the hidden activation, four times "
                "wider, never leaves its rank.",
    ),
    Question(
        id="09.any_middle_operator",
        answer_name="any_middle_operator",
        prompt="In the Megatron FFN, GELU between the column-parallel and the row-parallel GEMM "
               "needs no communication. True or False: any operator put there instead needs none "
               "either.",
        answer=False,
        kind=Exact(bool),
        wrong=[Wrong(True, "GELU is element-wise: each rank applies it to its own columns. An "
                           "operator that mixes the hidden dimension (a LayerNorm over it, a "
                           "softmax, a bias added per row sum) needs the other ranks' columns and "
                           "so a collective.")],
    ),
]
