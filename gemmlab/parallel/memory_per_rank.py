"""Memory per rank of one model under each parallel axis, and context parallelism's K/V traffic.

Model states in mixed-precision Adam take 16 B per parameter (Rajbhandari et al. 2020, ZeRO):
2 (FP16/BF16 weights) + 2 (gradients) + 12 (FP32 master weights and Adam's two moments). DP
keeps all of them on every rank; ZeRO-1 shards the 12 B of optimizer state over the n ranks,
ZeRO-2 the gradients too, ZeRO-3 the weights too. TP and PP shard the model's weights (TP within
each layer, PP by layers), so its states too. CP shards the sequence, not the weights: the states
stay whole and only the activations divide. ``activation_bytes`` is what one replica's forward
keeps for the backward (one micro-batch); TP is taken with sequence parallelism (activations / t);
PP with 1F1B (stage 0 holds p micro-batches of 1/p of the layers: the whole amount).
"""
from ..numeric_args import whole_number

WEIGHT, GRAD, OPTIMIZER = 2, 2, 12            # bytes per parameter, mixed-precision Adam
AXES = ("dp", "zero1", "zero2", "zero3", "tp", "pp", "cp")


def memory_per_rank(axis, params, n, activation_bytes=0.0):
    """Bytes on one rank: (model states, activations) for ``params`` parameters on ``n`` ranks."""
    n = whole_number("n", n)
    states = {
        "dp": (WEIGHT + GRAD + OPTIMIZER) * params,
        "zero1": (WEIGHT + GRAD) * params + OPTIMIZER * params / n,
        "zero2": WEIGHT * params + (GRAD + OPTIMIZER) * params / n,
        "zero3": (WEIGHT + GRAD + OPTIMIZER) * params / n,
        "tp": (WEIGHT + GRAD + OPTIMIZER) * params / n,
        "pp": (WEIGHT + GRAD + OPTIMIZER) * params / n,
        "cp": (WEIGHT + GRAD + OPTIMIZER) * params,
    }
    if axis not in states:
        raise ValueError(f"unknown axis {axis!r}; expected one of {', '.join(AXES)}")
    divides = axis in ("tp", "cp")
    return states[axis], activation_bytes / n if divides else activation_bytes


def ring_attention_kv_bytes(seq_len, cp, kv_dim, itemsize=2):
    """Bytes one rank sends per attention layer's forward in ring attention: its K and V block
    (seq_len / cp tokens x kv_dim each) passed on cp - 1 times around the cp ring."""
    cp = whole_number("cp", cp)
    block = 2 * (seq_len / cp) * kv_dim * itemsize
    return (cp - 1) * block
