"""gl.gemm(): what it accepts, what it refuses (and says why), and what it returns."""
import numpy as np
import pytest

import gemmlab as gl

cuda = gl.device.cuda()


def _mats(M=7, N=5, K=6, seed=None):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((M, K)).astype(np.float32),
            rng.standard_normal((K, N)).astype(np.float32),
            rng.standard_normal((M, N)).astype(np.float32))


def test_numpy_in_numpy_out_and_c_in_untouched():
    A, B, C = _mats()
    C_before = C.copy()
    out = gl.gemm(A, B, C, alpha=2.0, beta=-0.5)
    assert isinstance(out, np.ndarray) and out.dtype == np.float32 and out.shape == C.shape
    ref = 2.0 * A.astype(np.float64) @ B - 0.5 * C
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(C, C_before)


def test_device_in_device_out():
    A, B, C = _mats()
    out = gl.gemm(cuda.to_device(A), cuda.to_device(B), cuda.to_device(C), beta=1.0, kernel="outer")
    assert not isinstance(out, np.ndarray)
    np.testing.assert_allclose(out.copy_to_host(), A.astype(np.float64) @ B + C, rtol=1e-5, atol=1e-5)


def test_default_kernel_is_tiled_and_tiles_can_be_overridden():
    A, B, _ = _mats(9, 4, 3)
    np.testing.assert_allclose(gl.gemm(A, B, T=3), A.astype(np.float64) @ B, rtol=1e-5, atol=1e-5)


def test_empty_inner_dimension_gives_beta_c():
    _, _, C = _mats(4, 3, 1)
    out = gl.gemm(np.zeros((4, 0), np.float32), np.zeros((0, 3), np.float32), C, beta=3.0)
    np.testing.assert_allclose(out, 3.0 * C, rtol=1e-6)


def test_empty_output():
    out = gl.gemm(np.zeros((0, 4), np.float32), np.zeros((4, 3), np.float32))
    assert out.shape == (0, 3)


@pytest.mark.parametrize("args, error, words", [
    (lambda A, B, C: ([[1.0]], B), TypeError, "NumPy array or a CUDA device array"),
    (lambda A, B, C: (A[None], B), ValueError, "2-D"),
    (lambda A, B, C: (A, B.astype(np.float64)), TypeError, "float64"),
    (lambda A, B, C: (A.astype(np.float16), B), TypeError, "astype\\(np.float32\\)"),
    (lambda A, B, C: (A, B[:-1]), ValueError, "inner dimensions"),
    (lambda A, B, C: (A, B, np.ascontiguousarray(C[:, :-1])), ValueError, "shape of A B"),
    (lambda A, B, C: (np.asfortranarray(A), B), ValueError, "C-contiguous"),
    (lambda A, B, C: (A, np.ascontiguousarray(B)[:, ::2]), ValueError, "C-contiguous"),
])
def test_bad_matrices_are_refused_with_a_reason(args, error, words):
    A, B, C = _mats()
    with pytest.raises(error, match=words):
        gl.gemm(*args(A, B, C))


def test_non_contiguous_device_array_is_refused():
    A, B, _ = _mats()
    with pytest.raises(ValueError, match="C-contiguous"):
        gl.gemm(cuda.to_device(np.asfortranarray(A)), B)


@pytest.mark.parametrize("kwargs, error, words", [
    (dict(alpha="2"), TypeError, "alpha must be a real number"),
    (dict(alpha=True), TypeError, "alpha must be a real number"),    # a bool is no scale
    (dict(beta=1j), TypeError, "beta must be a real number"),
    (dict(beta=0.5), ValueError, "no C was given"),
    (dict(kernel="tilde"), ValueError, "Did you mean 'tiled'"),
    (dict(kernel="tiled", BM=8), ValueError, "no tile parameter BM"),
    (dict(kernel="tiled", T=4.0), TypeError, "whole number"),
    (dict(kernel="tiled", T=64), ValueError, "at most 1024"),
    (dict(kernel="outer", BM=128, BN=128, BK=64, TM=8, TN=8), ValueError, "48 KB"),
    (dict(kernel="outer", BM=16, TM=5), ValueError, "divide the block tile"),
    (dict(kernel="outer", BN=24, TN=8), ValueError, "power of two"),
    (dict(kernel="twolevel", BK=3), ValueError, "BK must be even"),
])
def test_bad_options_are_refused_with_a_reason(kwargs, error, words):
    A, B, _ = _mats()
    with pytest.raises(error, match=words):
        gl.gemm(A, B, **kwargs)


def test_gl_gemm_is_the_entry_function_of_the_ladder():
    import inspect

    from gemmlab.kernels import launch
    assert inspect.isfunction(gl.gemm) and gl.gemm is launch.gemm is gl.kernels.gemm
    A, B, _ = _mats(3, 2, 4)
    np.testing.assert_allclose(gl.gemm(A, B), A.astype(np.float64) @ B, rtol=1e-5, atol=1e-5)


def test_a_repeated_gemm_reuses_its_launch_configuration(monkeypatch):
    """The plan's checks and the kernel's configuration are made once per rung, tiles, shape
    and backend: counted at the rung's plan(), the step a second call must not repeat."""
    from gemmlab.kernels import launch, rungs
    launch.clear_launch_cache()
    # the GPU launches through the driver from its own kept parameter block; the simulator
    # through numba's configured kernel
    kept = launch.driver_launch if gl.device.backend() == "gpu" else launch.launch_configuration
    rung = rungs.get("outer")
    made = []
    original = rung.module.plan
    monkeypatch.setattr(rung.module, "plan", lambda **tiles: made.append(tiles) or original(**tiles))
    A, B, C = _mats(9, 11, 5, seed=3)
    first = gl.gemm(A, B, kernel="outer")
    again = gl.gemm(A, B, kernel="outer")
    assert len(made) == 1
    assert kept.cache_info().hits == 1
    np.testing.assert_array_equal(first, again)
    np.testing.assert_allclose(again, A.astype(np.float64) @ B, rtol=1e-5, atol=1e-5)
    # another shape is configured anew (its grid differs) but the plan is not checked again;
    # other tiles are planned (and checked) again
    A2, B2, _ = _mats(17, 3, 5, seed=4)
    np.testing.assert_allclose(gl.gemm(A2, B2, kernel="outer"), A2.astype(np.float64) @ B2,
                               rtol=1e-5, atol=1e-5)
    assert len(made) == 1 and kept.cache_info().misses == 2
    other_bk = 16 if made[0]["BK"] != 16 else 8        # tiles unlike this backend's default
    gl.gemm(A, B, kernel="outer", BK=other_bk)
    assert len(made) == 2 and made[1]["BK"] == other_bk


def test_bad_tiles_are_refused_again_on_a_second_call():
    """A refusal is not cached as if it were a configuration."""
    A, B, _ = _mats()
    for _ in range(2):
        with pytest.raises(ValueError):
            gl.gemm(A, B, kernel="outer", BM=3)
