"""Megatron's tensor-parallel self-attention: heads are independent branches, so W_Q, W_K, W_V
are column-split by heads, each rank runs attention for its own heads with no communication,
W_O is row-split to take those heads' outputs, and one sum at the exit merges the ranks.

Grouped-query attention (GQA, ``n_kv_heads < n_heads``; MQA when it is 1) shares each K/V head
between ``n_heads / n_kv_heads`` query heads. When p divides the K/V heads they are split like
the query heads; when the K/V heads divide p, each rank holds a replica of the one K/V head its
query heads use (as Megatron-LM does); otherwise the layout does not fit and an error says so.
X is one sequence of S tokens (S x d_model).
"""
import math

import numpy as np

from ..numeric_args import whole_number
from .comm import CommLog, ParallelResult, check_bias, check_reduction, reduce_partials
from .sharding import check_inner, check_matrix, check_ranks, require_divisible, split_rows


def _heads(Wq, Wk, Wv, Wo, n_heads, n_kv_heads):
    """Check the head layout of the weights; return (n_heads, n_kv_heads, d_head)."""
    n_heads = whole_number("n_heads", n_heads)
    n_kv_heads = n_heads if n_kv_heads is None else whole_number("n_kv_heads", n_kv_heads)
    if Wq.shape[1] % n_heads:
        raise ValueError(f"Wq has {Wq.shape[1]} output columns, which do not split into "
                         f"n_heads = {n_heads} heads of equal width")
    d_head = Wq.shape[1] // n_heads
    if n_heads % n_kv_heads:
        raise ValueError(f"each K/V head serves n_heads / n_kv_heads query heads, so n_kv_heads "
                         f"must divide n_heads: got n_heads = {n_heads}, n_kv_heads = {n_kv_heads}")
    for name, W in (("Wk", Wk), ("Wv", Wv)):
        if W.shape[1] != n_kv_heads * d_head:
            raise ValueError(f"{name} must have n_kv_heads x d_head = {n_kv_heads} x {d_head} = "
                             f"{n_kv_heads * d_head} columns, got {W.shape[1]}")
    if Wo.shape[0] != n_heads * d_head:
        raise ValueError(f"Wo must have n_heads x d_head = {n_heads * d_head} rows (one per "
                         f"concatenated head feature), got {Wo.shape[0]}")
    return n_heads, n_kv_heads, d_head


def _check_inputs(X, Wq, Wk, Wv, Wo):
    X = check_matrix("X (S tokens x d_model)", X)
    mats = [check_matrix(n, W) for n, W in (("Wq", Wq), ("Wk", Wk), ("Wv", Wv), ("Wo", Wo))]
    for name, W in zip(("Wq", "Wk", "Wv"), mats[:3], strict=True):
        check_inner(X, W, "X", name)
    return X, mats


def head_attention(Q, K, V, n_heads, n_kv_heads, causal=False):
    """Scaled dot-product attention of ``n_heads`` query heads over ``n_kv_heads`` K/V heads.

    Q: S x (n_heads d_h), K and V: S x (n_kv_heads d_h); query head i reads K/V head
    ``i // (n_heads // n_kv_heads)``. Returns the heads' outputs side by side, S x (n_heads d_h).
    """
    if not isinstance(causal, (bool, np.bool_)):
        raise TypeError(f"causal must be True or False, got {type(causal).__name__} {causal!r}")
    S, d_head = Q.shape[0], Q.shape[1] // n_heads
    q = Q.reshape(S, n_heads, d_head).transpose(1, 0, 2)
    group = n_heads // n_kv_heads
    k = np.repeat(K.reshape(S, n_kv_heads, d_head).transpose(1, 0, 2), group, axis=0)
    v = np.repeat(V.reshape(S, n_kv_heads, d_head).transpose(1, 0, 2), group, axis=0)
    scores = q @ k.transpose(0, 2, 1) / math.sqrt(d_head)
    if causal:
        scores = np.where(np.tri(S, dtype=bool), scores, -np.inf)
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights /= weights.sum(axis=-1, keepdims=True)
    return (weights @ v).transpose(1, 0, 2).reshape(S, n_heads * d_head)


def attention_reference(X, Wq, Wk, Wv, Wo, n_heads, n_kv_heads=None, causal=False, b_o=None):
    """The unsharded attention layer, computed in float64."""
    X, (Wq, Wk, Wv, Wo) = _check_inputs(X, Wq, Wk, Wv, Wo)
    n_heads, n_kv_heads, _ = _heads(Wq, Wk, Wv, Wo, n_heads, n_kv_heads)
    X, Wq, Wk, Wv, Wo = (np.asarray(a, dtype=np.float64) for a in (X, Wq, Wk, Wv, Wo))
    O = head_attention(X @ Wq, X @ Wk, X @ Wv, n_heads, n_kv_heads, causal)
    b_o = check_bias("b_o", b_o, Wo.shape[1])
    return O @ Wo + (0 if b_o is None else np.asarray(b_o, dtype=np.float64))


def _kv_layout(n_kv_heads, p):
    """How the K/V heads are laid out ("split" or "replicated") and which ones each rank holds."""
    if n_kv_heads % p == 0:
        per = n_kv_heads // p
        heads = [list(range(r * per, (r + 1) * per)) for r in range(p)]
        return "split", heads
    if p % n_kv_heads == 0:
        return "replicated", [[r * n_kv_heads // p] for r in range(p)]
    raise ValueError(f"n_kv_heads = {n_kv_heads} K/V heads do not fit p = {p} ranks: either p must "
                     f"divide n_kv_heads (each rank gets n_kv_heads/p of them) or n_kv_heads must "
                     f"divide p (each K/V head is replicated on p/n_kv_heads ranks)")


def _columns(W, heads, d_head):
    return W[:, heads[0] * d_head:(heads[-1] + 1) * d_head]


def attention_shards(Wq, Wk, Wv, Wo, n_heads, p, n_kv_heads=None):
    """Each rank's slices of the weights, by heads: a list of p dicts with Wq, Wk, Wv (columns of
    its heads), Wo (the matching rows), n_heads and n_kv_heads (how many it holds); and an info
    dict with q_heads, kv_heads (per rank), kv_mode ("split" or "replicated") and d_head."""
    mats = [check_matrix(n, W) for n, W in (("Wq", Wq), ("Wk", Wk), ("Wv", Wv), ("Wo", Wo))]
    n_heads, n_kv_heads, d_head = _heads(*mats, n_heads, n_kv_heads)
    p = check_ranks(p)
    require_divisible(n_heads, p, "n_heads", "head parallelism gives each rank n_heads/p whole "
                                             "attention heads")
    kv_mode, kv_heads = _kv_layout(n_kv_heads, p)
    per = n_heads // p
    q_heads = [list(range(r * per, (r + 1) * per)) for r in range(p)]
    Wq, Wk, Wv, Wo = mats
    shards = [{"Wq": _columns(Wq, q_heads[r], d_head), "Wk": _columns(Wk, kv_heads[r], d_head),
               "Wv": _columns(Wv, kv_heads[r], d_head), "Wo": Wo_r,
               "n_heads": per, "n_kv_heads": len(kv_heads[r])}
              for r, Wo_r in enumerate(split_rows(Wo, p))]
    info = {"q_heads": q_heads, "kv_heads": kv_heads, "kv_mode": kv_mode, "d_head": d_head}
    return shards, info


def rank_attention(X, shard, causal=False):
    """One rank's local work on its shard (from :func:`attention_shards`): its heads' Q, K, V,
    their attention outputs O and its partial sum P = O W_O,r, by name. No communication."""
    Q, K, V = (X @ shard[name] for name in ("Wq", "Wk", "Wv"))
    O = head_attention(Q, K, V, shard["n_heads"], shard["n_kv_heads"], causal)
    return {"Q": Q, "K": K, "V": V, "O": O, "P": O @ shard["Wo"]}


def megatron_attention_variant(X, Wq, Wk, Wv, Wo, n_heads, p, n_kv_heads=None, causal=False,
                               b_o=None, reduce="all-reduce", bias_before_sum=False):
    """:func:`megatron_attention` with the switch ``mistakes.py`` turns on: ``bias_before_sum``
    adds ``b_o`` on every rank before the sum."""
    X, (Wq, Wk, Wv, Wo) = _check_inputs(X, Wq, Wk, Wv, Wo)
    shards, info = attention_shards(Wq, Wk, Wv, Wo, n_heads, p, n_kv_heads)
    b_o = check_bias("b_o", b_o, Wo.shape[1])
    check_reduction(reduce)
    work = [rank_attention(X, shard, causal) for shard in shards]
    local = {name: [s[name] for s in shards] for name in ("Wq", "Wk", "Wv", "Wo")}
    local.update({name: [w[name] for w in work] for name in ("Q", "K", "V", "O", "P")})
    log = CommLog()
    outputs = reduce_partials(local["P"], b_o, reduce, "after the output projection W_O", log,
                              bias_before_sum)
    return ParallelResult(outputs, log, local, info)


def megatron_attention(X, Wq, Wk, Wv, Wo, n_heads, p, n_kv_heads=None, causal=False, b_o=None,
                       reduce="all-reduce"):
    """Multi-head (or grouped-query) self-attention on p simulated ranks, Megatron style.

    X: S x d_model; Wq: d_model x (n_heads d_h); Wk, Wv: d_model x (n_kv_heads d_h);
    Wo: (n_heads d_h) x d_model. Rank r owns query heads ``r n_heads/p ...`` and the K/V heads
    they read (``.info``); ``.local`` holds each rank's weight slices, Q, K, V, head outputs O and
    partial sum P; ``.comm`` has the one collective at the exit. ``b_o`` is added once, after it.
    """
    return megatron_attention_variant(X, Wq, Wk, Wv, Wo, n_heads, p, n_kv_heads, causal, b_o, reduce)
