"""Which CUDA stack fits: the driver's CUDA version against the CuPy wheel, and the extra to install."""
import pytest

from gemmlab import cudastack


@pytest.mark.parametrize("driver, extra", [((12, 4), "cuda12"), ((13, 0), "cuda13"),
                                           ((14, 1), "cuda13"), ((11, 8), None), (None, None)])
def test_the_extra_follows_the_drivers_cuda_major(driver, extra):
    assert cudastack.extra_for(driver) == extra


def test_a_cuda13_wheel_on_a_cuda12_driver_is_a_problem_that_names_the_fix():
    ok, text = cudastack.check((12, 4), {"cupy-cuda13x": "14.2.0"})
    assert not ok and "needs a CUDA 13 driver" in text and "gemmlab[cuda12]" in text


def test_a_cuda12_wheel_runs_on_a_cuda13_driver():
    ok, text = cudastack.check((13, 0), {"cupy-cuda12x": "13.6.0"})
    assert ok and "runs on this driver" in text


def test_missing_or_doubled_cupy_and_an_old_driver_are_explained():
    assert cudastack.check((12, 8), {}) == (False, "CuPy is not installed (no cuBLAS baseline, no "
                                            "Tensor Core kernels): pip install 'gemmlab[cuda12]'")
    ok, text = cudastack.check((13, 0), {"cupy-cuda12x": "13", "cupy-cuda13x": "14"})
    assert not ok and "conflict" in text
    ok, text = cudastack.check((11, 4), {})
    assert not ok and "update the NVIDIA driver" in text
    assert cudastack.check(None, {})[0]          # the simulator needs no CuPy
