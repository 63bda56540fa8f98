"""Megatron's FFN and attention over NCCL (``gemmlab.parallel.tp_nccl_rank``, one GPU's side of
``gemmlab tp --backend nccl``).

Everywhere: the per-rank code, run by p threads over a queue transport standing in for NCCL,
gives the simulated layers' bits. On the gpu backend: both layers at N = 1 (float32 and float16);
with N GPUs at N = 2, 4, 8, every GPU against the one-GPU layer, each all-reduce timed; with fewer
GPUs those tests skip ("needs N GPUs, found M").
"""
import numpy as np
import pytest
from multirank import QueueRing, needs_gpus

from gemmlab.parallel import megatron_attention, megatron_ffn, tp
from gemmlab.parallel.tp_nccl_rank import layer_on_rank


@pytest.mark.parametrize("p", [1, 2, 4])
def test_ffn_on_ranks_is_the_simulated_megatron_ffn(p):
    inputs = tp.make_inputs("ffn", 6, 8, seed=p)
    shards = tp.layer_shards("ffn", inputs, p)
    outputs = QueueRing(p).run(lambda t: layer_on_rank(t, "ffn", inputs["X"], shards[t.rank]))
    simulated = megatron_ffn(inputs["X"], inputs["W_up"], inputs["W_down"], p)
    for got, expected in zip(outputs, simulated.outputs, strict=True):
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("p,kv_heads", [(1, None), (2, None), (4, 2), (4, 8)])
def test_attention_on_ranks_is_the_simulated_megatron_attention(p, kv_heads):
    inputs = tp.make_inputs("attention", 5, 16, n_heads=8, n_kv_heads=kv_heads, seed=p)
    shards = tp.layer_shards("attention", inputs, p, 8, kv_heads)
    outputs = QueueRing(p).run(lambda t: layer_on_rank(t, "attention", inputs["X"],
                                                       shards[t.rank]))
    weights = [inputs[k] for k in ("Wq", "Wk", "Wv", "Wo")]
    simulated = megatron_attention(inputs["X"], *weights, 8, p, kv_heads)
    for got, expected in zip(outputs, simulated.outputs, strict=True):
        np.testing.assert_array_equal(got, expected)


SHAPES = [("ffn", {"tokens": 64, "d_model": 128}),
          ("attention", {"tokens": 48, "d_model": 64, "n_heads": 8, "n_kv_heads": 2})]


@needs_gpus(1)
@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("layer,shape", SHAPES)
def test_layers_on_one_gpu(layer, shape, dtype):
    report = tp.run_layer("nccl", layer, 1, **shape, dtype=dtype, repeats=2, iters=1,
                          timeout=300)
    assert report["verified"] and report["n_ranks"] == 1 and report["dtype"] == dtype
    assert set(report["allreduce_seconds"]) == {"ring", "ring_stepwise", "ring_nvlink", "nccl"}
    assert all(0 <= share < 1 for share in report["comm_share"].values())


@pytest.mark.parametrize("n", [pytest.param(n, marks=needs_gpus(n)) for n in (2, 4, 8)])
@pytest.mark.parametrize("layer,shape", SHAPES)
def test_layers_on_n_gpus(n, layer, shape):
    report = tp.run_layer("nccl", layer, n, **shape, repeats=2, iters=1, timeout=300)
    assert report["verified"] and report["n_ranks"] == n
    assert max(report["max_rel_error"].values()) <= tp.TOLERANCE["float32"]
