"""Lesson 14, Megatron's attention: heads per rank, local widths, W_O's row split, the exit sum,
GQA/MQA layouts and the divisibility rule."""
import numpy as np

from ...parallel import attention_reference, megatron_attention, split_rows
from ...labs.solutions import solution
from ...labs.tensor import AttentionLab
from ...judging import Choice, Exact, Function, Question, Shape, Wrong


# The seed's exercise: standard MHA, d_model = 4096, h = 32 (d_h = 128), TP = 8.
D_MODEL, H, TP = 4096, 32, 8
D_HEAD = D_MODEL // H
TOKENS = 2048
H_12 = 12                      # a head count that TP = 8 does not divide


def _layout(n_heads, p, n_kv_heads=None):
    """The head layout megatron_attention picks, measured on a tiny layer with 1-wide heads."""
    rng = np.random.default_rng(1414)
    X = rng.standard_normal((2, n_heads))
    kv = n_heads if n_kv_heads is None else n_kv_heads
    Wq, Wo = np.eye(n_heads), np.eye(n_heads)
    Wk = Wv = rng.standard_normal((n_heads, kv))
    return megatron_attention(X, Wq, Wk, Wv, Wo, n_heads, p, n_kv_heads=kv).info


def _heads_per_rank():
    return len(_layout(H, TP)["q_heads"][0])


def _wo_r_shape():
    return split_rows(np.empty((H * D_HEAD, D_MODEL), np.int8), TP)[0].shape


def rank_partial_attention(X, Wq, Wk, Wv, Wo, n_heads, p, r):
    """Rank r's partial output O_r W_O,r in Megatron's attention (standard MHA)."""
    return megatron_attention(X, Wq, Wk, Wv, Wo, n_heads, p).local["P"][r]


def _attention_cases():
    rng = np.random.default_rng(1441)
    cases = []
    for S, h, d_h, p, r in [(5, 4, 2, 2, 1), (3, 6, 1, 3, 0), (4, 8, 2, 4, 2)]:
        d = h * d_h
        Wq, Wk, Wv, Wo = (rng.standard_normal((d, d)) / np.sqrt(d) for _ in range(4))
        cases.append((rng.standard_normal((S, d)), Wq, Wk, Wv, Wo, h, p, r))
    return cases


def _attention_hidden(rng):
    cases = []
    for _ in range(3):
        p = int(rng.choice([2, 3, 4]))
        h, d_h, S = p * int(rng.integers(1, 4)), int(rng.integers(1, 4)), int(rng.integers(1, 7))
        d = h * d_h
        Wq, Wk, Wv, Wo = (rng.standard_normal((d, d)) / np.sqrt(d) for _ in range(4))
        cases.append((rng.standard_normal((S, d)), Wq, Wk, Wv, Wo, h, p, int(rng.integers(p))))
    return cases


def _whole_layer(X, Wq, Wk, Wv, Wo, n_heads, p, r):
    return attention_reference(X, Wq, Wk, Wv, Wo, n_heads)


def _all_heads_divided(X, Wq, Wk, Wv, Wo, n_heads, p, r):
    return attention_reference(X, Wq, Wk, Wv, Wo, n_heads) / p


QUESTIONS = [
    Question(
        id="14.heads_per_rank",
        prompt="Standard MHA with d_model = 4096 and h = 32 heads (d_h = 128) on TP = 8: how many "
               "heads does each rank own?",
        answer=_heads_per_rank,
        kind=Exact(int),
        wrong=[
            Wrong(H, "that is every head: each rank computes only its own h/p heads."),
            Wrong(TP, "8 is the number of ranks; the heads per rank are h/p."),
        ],
        hint="h / TP.",
        explain="Whole heads per rank: head parallelism needs TP to divide h.",
    ),
    Question(
        id="14.local_q_width",
        prompt="Same layer (d_model = 4096, h = 32, TP = 8): how many columns does each rank's "
               "local Q_r have?",
        answer=lambda: _heads_per_rank() * D_HEAD,
        kind=Exact(int),
        wrong=[
            Wrong(D_MODEL, "that is the full width h d_h: each rank's Q_r has only its heads' "
                           "columns."),
            Wrong(D_HEAD, "that is one head's width; each rank owns h/p = 4 heads."),
            Wrong(lambda: _heads_per_rank(), "that is the number of heads; each is d_h = 128 "
                                             "columns wide."),
        ],
        hint="(heads per rank) x d_h.",
        explain="Q_r is M x 512: complete queries of 4 heads.",
    ),
    Question(
        id="14.WO_r_shape",
        prompt="Same layer: the shape of each rank's block W_O,r of the output projection W_O "
               "(4096 x 4096 in math form, Y = O W_O).",
        answer=_wo_r_shape,
        kind=Shape(),
        wrong=[
            Wrong(lambda: tuple(reversed(_wo_r_shape())),
                  "that is a column split of W_O (or a row block in PyTorch's out x in storage). "
                  "A column-split W_O would need all heads' outputs on every rank; W_O is "
                  "row-split by heads so that O_r, M x 512, can multiply it."),
            Wrong((D_MODEL, D_MODEL), "that is the whole W_O: each rank holds only the rows of "
                                      "its own heads."),
        ],
        hint="Its rows must match O_r's 512 columns; its columns are the model width.",
        explain="(h/p) d_h x d_model: the contraction matches the local head outputs.",
    ),
    Question(
        id="14.P_r_shape",
        prompt="Same layer with M = 2048 tokens: the shape of each rank's result P_r = O_r W_O,r.",
        answer=lambda: (TOKENS, _wo_r_shape()[1]),
        kind=Shape(),
        wrong=[
            Wrong((TOKENS, _heads_per_rank() * D_HEAD),
                  "P_r is back at the model width: a partial sum of the full M x d_model output, "
                  "not a shard."),
        ],
        hint="(M x 512) times (512 x 4096).",
        explain="Eight same-shape partial sums: one sum all-reduce.",
    ),
    Question(
        id="14.exit_merge",
        prompt="How do the ranks' P_r combine into the attention output: 'concat' or 'sum'?",
        answer="sum",
        kind=Choice(("concat", "sum")),
        wrong=[Wrong("concat", "each P_r is already d_model wide: it is a partial sum, the "
                               "contribution of this rank's heads to every output feature. Add "
                               "them.")],
        hint="What shape does each P_r have?",
        explain="W_O mixes all heads: the exit is a sum over ranks.",
    ),
    Question(
        id="14.WO_split",
        prompt="Is W_O (Y = O W_O) split by 'column' or by 'row' in Megatron's attention?",
        answer="row",
        kind=Choice(("column", "row")),
        wrong=[Wrong("column", "a column split keeps W_O's input rows whole, so every rank would "
                               "need all heads' outputs (an all-gather). Row-splitting by heads "
                               "takes the local O_r as it is.")],
        hint="Which dimension of W_O matches the heads?",
        explain="Column first (Q, K, V), row last (W_O): the FFN's pattern again.",
    ),
    Question(
        id="14.gqa_kv_heads_per_rank",
        prompt="GQA with 32 query heads and 8 K/V heads on TP = 4: how many K/V heads does each "
               "rank hold?",
        answer=lambda: len(_layout(32, 4, 8)["kv_heads"][0]),
        kind=Exact(int),
        wrong=[
            Wrong(8, "8 is all the K/V heads (or the query heads per rank). TP = 4 divides 8 "
                     "K/V heads, so each rank holds only the ones its 8 query heads read."),
            Wrong(4, "4 is the group size, the query heads sharing one K/V head. Each rank owns "
                     "8 query heads, two groups."),
        ],
        hint="Rank r's query heads are 8r .. 8r+7; query head i reads K/V head i // 4.",
        explain="When TP divides the K/V heads, they split like the query heads.",
    ),
    Question(
        id="14.mqa_kv_layout",
        prompt="MQA (one K/V head) on TP = 8: is the K/V head 'split' or 'replicated'?",
        answer=lambda: _layout(32, 8, 1)["kv_mode"],
        kind=Choice(("split", "replicated")),
        wrong=[Wrong("split", "one head cannot be split by heads: MHA's 'split Q, K, V alike' "
                              "does not carry over. Every rank's queries need that head, so each "
                              "rank holds a copy.")],
        hint="How many K/V heads are there to share out?",
        explain="GQA/MQA: split the K/V heads when TP divides them, replicate when they divide TP.",
    ),
    Question(
        id="14.max_tp_for_12_heads",
        prompt="A model has 12 attention heads. Of TP = 1, 2, 4, 8, which is the largest that "
               "plain head parallelism supports?",
        answer=lambda: max(p for p in (1, 2, 4, 8) if H_12 % p == 0),
        kind=Exact(int),
        wrong=[Wrong(8, "12 % 8 = 4: eight ranks cannot own whole heads evenly. Head "
                        "parallelism needs TP to divide h (or uneven splits, padding, another "
                        "degree).")],
        hint="Which of them divide 12?",
        explain="h mod TP = 0 is the basic rule.",
    ),
    Question(
        id="14.rank_partial_attention",
        prompt="Write rank_partial_attention(X, Wq, Wk, Wv, Wo, n_heads, p, r): rank r's partial "
               "output O_r W_O,r for standard MHA (no mask, no bias).",
        answer=rank_partial_attention,
        kind=Function(_attention_cases, hidden=_attention_hidden),
        wrong=[
            Wrong(_whole_layer, "that is the whole layer's output. Rank r uses only its own "
                                "heads' columns of Wq, Wk, Wv and their rows of Wo."),
            Wrong(_all_heads_divided, "the whole output divided by p has the right sum but not "
                                      "the right parts: each P_r is its own heads' contribution."),
        ],
        hint="Columns r*w .. (r+1)*w of Wq, Wk, Wv (w = d_model / p), gl.parallel.head_attention "
             "with n_heads // p heads, rows r*w .. (r+1)*w of Wo.",
        explain="Sum the p of them and you have the layer's output.",
    ),
    Question(
        id="14.lab_attention",
        prompt="Lab: write attention_rank(comm, X, Wq_r, Wk_r, Wv_r, Wo, b_o, n_heads), one rank "
               "of Megatron's multi-head attention (no mask): X (S x d_model) is the whole input; "
               "rank r owns heads r h/p ... (r+1) h/p - 1 and Wq_r, Wk_r, Wv_r are their columns "
               "(d_model x (h/p) d_h each); Wo ((h d_h) x d_model) and its bias b_o are whole; "
               "n_heads = h. Return the whole S x d_model output on every rank, using "
               "gl.parallel.head_attention and comm.all_reduce.",
        answer=lambda: solution("14.lab_attention", name="attention_rank"),
        kind=AttentionLab(),
        answer_name="attention_rank",
        hint="Attention for this rank's h/p heads is local; their outputs multiply the rows of "
             "W_O that belong to those heads; one all-reduce; b_o once.",
        explain="Heads are independent until W_O; splitting W_O by rows turns the mixing into a "
                "sum of partial outputs, so the layer communicates once, at its exit.",
    ),
    Question(
        id="14.q_shards_merge",
        prompt="How do the ranks' local Q_r, from the column-parallel Q projection, relate to the "
               "full Q: 'concat' or 'sum'?",
        answer="concat",
        kind=Choice(("concat", "sum")),
        wrong=[Wrong("sum", "each rank holds the columns of different heads; adding them would "
                            "mix unrelated heads. The full Q is the shards side by side.")],
    ),
    Question(
        id="14.gather_after_qkv",
        prompt="Must Q, K and V be all-gathered right after the projections so that every rank "
               "can compute attention? True or False.",
        answer=False,
        kind=Exact(bool),
        wrong=[Wrong(True, "each head needs only its own columns of Q, K and V, and each rank "
                           "owns whole heads. Gathering them would move 1.5 times the exit "
                           "all-reduce's bytes for nothing.")],
    ),
    Question(
        id="14.heads_never_mix",
        prompt="Do the heads' contributions stay separate all the way to the attention layer's "
               "output? True or False.",
        answer=False,
        kind=Exact(bool),
        wrong=[Wrong(True, "they are independent up to the head outputs O_i; W_O then mixes every "
                           "head into every output feature, which is why the exit needs a sum "
                           "over the ranks.")],
    ),
]
