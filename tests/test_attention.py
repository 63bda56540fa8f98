"""gemmlab/attention (online.py, tiled.py, cost.py): the online softmax equals the softmax, merges
in any order, the tiled algorithm equals the float64 reference at ragged sizes, the mistakes it
can switch on change the result, and the cost model's counts."""
import math

import numpy as np
import pytest

import gemmlab as gl
from gemmlab.attention import (OnlineState, attention_flops, attention_reference,
                               attention_traffic, kv_tiles_visited, merge_states, online_softmax,
                               online_steps, softmax_reference, tiled_attention)


@pytest.fixture
def qkv():
    rng = np.random.default_rng(0)
    return tuple(rng.standard_normal((37, 24)) for _ in range(3))


@pytest.mark.parametrize("tile", [1, 3, 8, 100])
def test_online_softmax_is_the_softmax_for_any_tile(tile):
    scores = np.random.default_rng(1).uniform(-30, 30, 41)
    assert np.allclose(online_softmax(scores, tile), softmax_reference(scores), rtol=1e-13)


def test_the_running_max_and_sum_after_each_tile():
    steps = online_steps([1.0, 5.0, 3.0, 9.0], 2)
    assert [state.m for _, state in steps] == [5.0, 9.0]
    assert math.isclose(steps[0][1].l, math.exp(-4) + 1)
    assert math.isclose(steps[1][1].l, (math.exp(-4) + 1) * math.exp(-4) + math.exp(-6) + 1)


def test_merging_states_in_any_order_gives_the_whole_rows_state():
    x = np.random.default_rng(2).uniform(-50, 50, 30)
    parts = [OnlineState().add(x[i:i + 7]) for i in range(0, 30, 7)]
    left = parts[0]
    for p in parts[1:]:
        left = merge_states(left, p)
    right = parts[-1]
    for p in reversed(parts[:-1]):
        right = merge_states(p, right)
    whole = OnlineState().add(x)
    assert left.m == right.m == whole.m
    assert math.isclose(left.l, whole.l) and math.isclose(right.l, whole.l)
    assert merge_states(OnlineState(), OnlineState()) == OnlineState()


def test_without_the_max_float32_softmax_overflows_to_nan():
    scores = np.array([90.0, 91.0, 92.0])
    assert np.isnan(softmax_reference(scores, subtract_max=False, dtype=np.float32)).all()
    assert np.isfinite(softmax_reference(scores, dtype=np.float32)).all()


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("Br, Bc", [(8, 8), (5, 3), (64, 64)])
def test_tiled_attention_equals_the_reference(qkv, causal, Br, Bc):
    run = tiled_attention(*qkv, Br, Bc, causal)
    assert np.allclose(run.O, attention_reference(*qkv, causal), atol=1e-12)
    assert run.visited == kv_tiles_visited(37, Br, Bc, causal)
    assert run.visited + run.skipped == math.ceil(37 / Br) * math.ceil(37 / Bc)


def test_the_reference_agrees_with_lesson_14s_heads(qkv):
    Q, K, V = qkv
    heads = gl.parallel.head_attention(Q, K, V, 1, 1, causal=True)
    assert np.allclose(attention_reference(Q, K, V, causal=True), heads)


@pytest.mark.parametrize("flags", [dict(rescale_acc=False), dict(rescale_sum=False),
                                   dict(mask_shift=1)])
def test_each_mistake_changes_the_result(qkv, flags):
    Q, K, V = qkv
    wrong = tiled_attention(3 * Q, K, V, 8, 8, causal=True, **flags).O
    assert not np.allclose(wrong, attention_reference(3 * Q, K, V, causal=True), atol=1e-3)


def test_causal_skips_the_tiles_after_the_diagonal():
    assert kv_tiles_visited(4096, 128, 128, causal=True) == 32 * 33 // 2
    assert kv_tiles_visited(4096, 128, 128) == 32 * 32


def test_traffic_counts_s_and_p_four_times_unfused():
    N, d = 4096, 128
    assert attention_traffic(1, 1, N, d, "unfused") == (4 * N * d + 4 * N * N) * 2
    assert attention_traffic(2, 3, N, d, "unfused") == 6 * attention_traffic(1, 1, N, d, "unfused")
    assert attention_traffic(1, 1, N, d, "fused", kv_cached=True) == 4 * N * d * 2
    fused = attention_traffic(1, 1, N, d, "fused", Br=128, Bc=64)
    assert fused == (2 * N * d + 2 * (N // 128) * N * d) * 2
    assert attention_traffic(1, 1, N, d, "fused", causal=True) < fused


def test_fusion_adds_flops_and_saves_bytes():
    unfused = attention_flops(1, 1, 4096, 128, "unfused")
    fused = attention_flops(1, 1, 4096, 128, "fused", Bc=64)
    assert unfused < fused < 1.01 * unfused
    assert attention_traffic(1, 1, 4096, 128, "fused") < attention_traffic(1, 1, 4096, 128,
                                                                           "unfused")


@pytest.mark.parametrize("bad", [dict(version="flash"), dict(N=0), dict(d=2.5)])
def test_bad_arguments_say_what_was_expected(bad):
    args = dict(B=1, H=1, N=64, d=16, version="fused") | bad
    with pytest.raises(ValueError, match="must be"):
        attention_traffic(**args)
