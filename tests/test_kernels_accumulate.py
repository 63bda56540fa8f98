"""The device accumulation kernel (simulator in CI, the GPU under `make gpu-test`) against
gemmlab.precision.accumulate."""
import numpy as np
import pytest

import gemmlab as gl
from gemmlab.kernels import accumulate as K
from gemmlab.precision import accumulate, round_to


def test_prefix_lengths():
    assert K.prefix_lengths(4096, 8).tolist() == [512 * t for t in range(1, 9)]
    assert K.prefix_lengths(10, 3).tolist() == [3, 6, 10]
    assert K.prefix_lengths(2, 4).tolist() == [1, 1, 1, 2]
    with pytest.raises(ValueError):
        K.prefix_lengths(0, 4)


@pytest.mark.parametrize("acc", ["fp16", "fp32"])
def test_ones_experiment_shows_the_fp16_stall(acc):
    sizes = gl.device.sizes()
    lengths, sums = K.ones_experiment(acc)
    assert lengths.size == sizes["accumulate_threads"] and lengths[-1] == sizes["accumulate_n"]
    expected = [accumulate(np.ones(n), acc) for n in lengths]
    assert sums.tolist() == expected
    if acc == "fp16":
        assert sums.max() == 2048 and np.all(sums == np.minimum(lengths, 2048))
    else:
        assert sums.tolist() == lengths.tolist()


@pytest.mark.parametrize("acc,inputs", [("fp16", "fp16"), ("fp32", "fp16"), ("fp32", "fp32"),
                                        ("fp16", "fp32")])
def test_device_sums_match_precision_accumulate(acc, inputs):
    rng = np.random.default_rng(11)
    n = min(gl.device.sizes()["accumulate_n"], 2000)
    threads = 8
    for values in (rng.random(n) * 4, rng.normal(size=n) * 30):
        lengths = np.concatenate([[0, 1, 2], K.prefix_lengths(n, threads - 3)])
        got = K.device_prefix_sums(values, lengths, acc=acc, inputs=inputs)
        x = round_to(values, inputs)
        if acc == "fp16" and inputs == "fp32":
            # the FP32 input is added to the FP16 sum in FP32, then rounded once to FP16
            want = []
            for m in lengths:
                s = np.float16(0)
                for v in x[:m]:
                    s = np.float16(np.float32(s) + np.float32(v))
                want.append(float(s))
        else:
            want = [accumulate(x[:m], acc) for m in lengths]
        assert got.tolist() == want, (acc, inputs)


def test_mixed_precision_on_the_device():
    # FP16 inputs, FP32 accumulator: 4096 ones are summed exactly; 4097 stored in FP16 is not.
    lengths = np.array([1, 4096])
    sums = K.device_prefix_sums(np.ones(4096), lengths, acc="fp32", inputs="fp16")
    assert sums.tolist() == [1.0, 4096.0]
    assert K.device_prefix_sums([4097.0], [1], acc="fp32", inputs="fp16").tolist() == [4096.0]


def test_bad_arguments():
    with pytest.raises(ValueError, match="accumulators"):
        K.device_prefix_sums(np.ones(4), [4], acc="bf16")
    with pytest.raises(ValueError, match="unknown format"):
        K.device_prefix_sums(np.ones(4), [4], acc="fp12")
    with pytest.raises(ValueError, match="0..4"):
        K.device_prefix_sums(np.ones(4), [5], acc="fp16")
    with pytest.raises(TypeError):
        K.device_prefix_sums(["a"], [1], acc="fp16")
