"""Memory per rank under each axis and ring attention's K/V bytes, against hand arithmetic."""
import pytest

from gemmlab.parallel.memory_per_rank import memory_per_rank, ring_attention_kv_bytes

PSI, N, ACT = 7e9, 8, 80e9           # 7e9 parameters on 8 ranks, 80 GB of activations per replica


@pytest.mark.parametrize("axis,states,acts", [
    ("dp", 16 * 7e9, 80e9),                            # 112 GB: everything on every rank
    ("zero1", 4 * 7e9 + 12 * 7e9 / 8, 80e9),           # 38.5 GB
    ("zero2", 2 * 7e9 + 14 * 7e9 / 8, 80e9),           # 26.25 GB
    ("zero3", 16 * 7e9 / 8, 80e9),                     # 14 GB
    ("tp", 14e9, 10e9),
    ("pp", 14e9, 80e9),
    ("cp", 112e9, 10e9),                               # weights whole, the sequence divided
])
def test_each_axis_matches_hand_arithmetic(axis, states, acts):
    assert memory_per_rank(axis, PSI, N, ACT) == pytest.approx((states, acts))


def test_ring_attention_sends_its_kv_block_cp_minus_one_times():
    # 32768 tokens on 4 ranks, K and V of 1024 values each per token in BF16: 8192 x 2 x 1024 x 2 B
    assert ring_attention_kv_bytes(32768, 4, 1024) == 3 * 8192 * 2 * 1024 * 2
    assert ring_attention_kv_bytes(32768, 1, 1024) == 0


def test_an_unknown_axis_is_refused():
    with pytest.raises(ValueError, match="zero3"):
        memory_per_rank("fsdp", PSI, N)
