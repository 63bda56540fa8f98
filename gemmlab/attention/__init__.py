"""Fused attention (lesson 16): the maths the lesson, its puzzles and its lab rest on.

- :mod:`.online`: softmax in one pass, its running max and sum, and how two partial states merge;
- :mod:`.tiled`: attention computed tile by tile as a fused kernel does (a query tile against K/V
  tiles, O kept per row, causal tiles skipped), with the classic mistakes switchable, in NumPy;
- :mod:`.cost`: FLOPs and bytes of the unfused three-kernel version and of the fused one, from
  the course's traffic model (:mod:`gemmlab.perfmodel.traffic`).
"""
from .cost import attention_flops, attention_traffic
from .online import (OnlineState, attention_reference, merge_states, online_softmax,
                     online_steps, softmax_reference)
from .tiled import TiledRun, kv_tiles_visited, tiled_attention

__all__ = ["OnlineState", "TiledRun", "attention_flops", "attention_reference",
           "attention_traffic", "kv_tiles_visited", "merge_states", "online_softmax",
           "online_steps", "softmax_reference", "tiled_attention"]
