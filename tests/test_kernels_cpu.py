"""The five CPU GEMMs against a float64 reference on random odd shapes, with tails."""
import numpy as np
import pytest

from gemmlab.kernels.cpu import names, run, tiled

rng = np.random.default_rng()


def _operands(M, N, K):
    A = rng.standard_normal((M, K)).astype(np.float32)
    B = rng.standard_normal((K, N)).astype(np.float32)
    return A, B


@pytest.mark.parametrize("shape", [(1, 1, 1), (67, 45, 131), (129, 3, 70), (5, 97, 1)])
def test_every_version_matches_float64_on_odd_shapes(shape):
    M, N, K = shape
    A, B = _operands(M, N, K)
    reference = A.astype(np.float64) @ B.astype(np.float64)
    scale = np.abs(A).astype(np.float64) @ np.abs(B).astype(np.float64)
    results = {name: run(name, A, B) for name in names()}
    for name, C in results.items():
        assert C.shape == (M, N) and C.dtype == np.float32, name
        # FP32 sequential accumulation: error grows at most about K * eps relative to |A||B|
        assert np.all(np.abs(C - reference) <= 2 * K * np.finfo(np.float32).eps * scale + 1e-30), name
    # the same accumulation order for each output: identical bits
    first = results["naive_ijk"]
    for name, C in results.items():
        np.testing.assert_array_equal(C, first, err_msg=name)


def test_a_tile_larger_than_the_matrix_and_a_tile_of_one_work():
    A, B = _operands(7, 9, 11)
    np.testing.assert_array_equal(tiled(A, B, 1000), tiled(A, B, 1))


def test_bad_inputs_get_a_clear_message():
    A, B = _operands(4, 5, 6)
    with pytest.raises(ValueError, match="inner dimensions"):
        run("naive_ijk", A, A)
    with pytest.raises(TypeError, match="float32"):
        run("naive_ijk", A.astype(np.float64), B)
    with pytest.raises(ValueError, match="C-contiguous"):
        run("reordered_ikj", A, np.asfortranarray(B))
    with pytest.raises(ValueError, match="2-D"):
        run("tiled_16", A[0], B)
    with pytest.raises(ValueError, match="unknown CPU GEMM"):
        run("blocked", A, B)
    with pytest.raises(ValueError, match="tile"):
        tiled(A, B, 0)
