"""Tensor and 4D parallelism on simulated ranks (plain NumPy, one process).

- :mod:`.sharding`: ``column_parallel``, ``row_parallel``, weight layouts (out x in vs in x out)
- :mod:`.ledger`: the per-rank shape ledger of ``Y = X W``
- :mod:`.ffn`: Megatron's FFN (GELU and SwiGLU) with one sum at the exit, and its backward
- :mod:`.attention`: Megatron's multi-head / grouped-query attention split by heads
- :mod:`.mistakes`: the classic mistakes, runnable (bias on every rank, concatenated sums, ...)
- :mod:`.grid`: ``RankGrid``, the 4D (tp, cp, dp, pp) rank layout and its groups
- :mod:`.budget`: the time budget of one FFN layer on a 4D grid (lesson 15's model)

Every sharded layer returns a :class:`ParallelResult`: ``.outputs`` (each rank's result after the
exit collective), ``.comm`` (which collectives ran and the bytes each rank sent), ``.local`` (each
rank's intermediate tensors). The collectives are those of :mod:`gemmlab.collectives`.
"""
from .attention import (attention_reference, attention_shards, head_attention, megatron_attention,
                        rank_attention)
from .budget import budget_config, layer_budget
from .comm import CommLog, CommRecord, ParallelResult
from .ffn import (ffn_backward_reference, ffn_reference, gelu, gelu_grad, megatron_ffn,
                  megatron_ffn_backward, megatron_swiglu_ffn, rank_ffn, silu, swiglu_reference)
from .grid import AXES, Coords, RankGrid
from .ledger import ShapeLedger, shape_ledger
from .mistakes import (attention_bias_on_every_rank, concat_partial_sums, ffn_allgather_in_middle,
                       ffn_bias_on_every_rank, sum_column_shards)
from .sharding import (column_parallel, math_weight, parallel_kind, row_parallel, split_columns,
                       split_rows)

__all__ = [
    "column_parallel", "row_parallel", "split_columns", "split_rows", "math_weight",
    "parallel_kind", "ShapeLedger", "shape_ledger", "megatron_ffn", "megatron_swiglu_ffn",
    "ffn_reference", "swiglu_reference", "gelu", "gelu_grad", "silu", "megatron_ffn_backward",
    "ffn_backward_reference", "megatron_attention",
    "attention_reference", "head_attention", "attention_shards", "rank_attention", "rank_ffn", "ffn_bias_on_every_rank",
    "attention_bias_on_every_rank", "concat_partial_sums", "sum_column_shards",
    "ffn_allgather_in_middle", "RankGrid", "Coords", "AXES", "ParallelResult", "CommLog",
    "CommRecord", "budget_config", "layer_budget",
]
