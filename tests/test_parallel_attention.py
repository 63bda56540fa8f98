"""Attention's causal flag is a bool: "no" must not silently mean True."""
import numpy as np
import pytest

import gemmlab as gl


@pytest.mark.parametrize("causal", ["no", "False", 0, 1, None])
def test_causal_must_be_a_bool(causal):
    rng = np.random.default_rng(0)
    X, W = rng.standard_normal((3, 4)), rng.standard_normal((4, 4))
    with pytest.raises(TypeError, match=f"causal must be True or False, got {type(causal).__name__}"):
        gl.parallel.megatron_attention(X, W, W, W, W, 2, 2, causal=causal)
    with pytest.raises(TypeError, match="causal must be True or False"):
        gl.parallel.attention_reference(X, W, W, W, W, 2, causal=causal)


def test_numpy_bools_are_bools():
    rng = np.random.default_rng(1)
    X, W = rng.standard_normal((3, 4)), rng.standard_normal((4, 4))
    a = gl.parallel.attention_reference(X, W, W, W, W, 2, causal=np.bool_(True))
    b = gl.parallel.attention_reference(X, W, W, W, W, 2, causal=True)
    np.testing.assert_array_equal(a, b)
