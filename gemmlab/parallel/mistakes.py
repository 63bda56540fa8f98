"""The classic tensor-parallel mistakes, as functions a lesson can run and compare with the right
answer. Each one is a misconception from the course: its result (or its traffic) shows what goes
wrong.
"""
import numpy as np

from .attention import megatron_attention_variant
from .ffn import megatron_ffn_variant
from .sharding import column_parallel, row_parallel


def ffn_bias_on_every_rank(X, W_up, W_down, p, b_down):
    """Megatron FFN where every rank adds the whole down-projection bias to its partial sum before
    the all-reduce: the sum then holds p copies of b, so Y is off by (p - 1) b."""
    return megatron_ffn_variant(X, W_up, W_down, p, b_down=b_down, bias_before_sum=True)


def attention_bias_on_every_rank(X, Wq, Wk, Wv, Wo, n_heads, p, b_o, n_kv_heads=None):
    """Megatron attention where every rank adds W_O's bias before the sum: off by (p - 1) b_o."""
    return megatron_attention_variant(X, Wq, Wk, Wv, Wo, n_heads, p, n_kv_heads, b_o=b_o, bias_before_sum=True)


def concat_partial_sums(X, W, p):
    """Row parallel merged by concatenating the partial sums instead of adding them: an
    M x (p N) matrix, although each P_r already has Y's full M x N shape."""
    return np.concatenate(row_parallel(X, W, p), axis=1)


def sum_column_shards(X, W, p):
    """Column parallel merged by adding the shards instead of concatenating them: an M x N/p
    matrix that mixes different output columns of Y."""
    return np.sum(column_parallel(X, W, p), axis=0)


def ffn_allgather_in_middle(X, W_up, W_down, p, b_down=None):
    """Megatron FFN built layer by layer in isolation: the up projection all-gathers its output
    before GELU, then the down projection cuts it up again. Y is still right; the all-gather is
    pure extra traffic, counted in ``.comm``."""
    return megatron_ffn_variant(X, W_up, W_down, p, b_down=b_down, gather_middle=True)
