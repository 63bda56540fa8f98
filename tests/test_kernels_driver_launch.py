"""gl.gemm's driver launch: the parameter block is numba's layout, and on a GPU the driver launch
gives numba's launch's results (CuPy in, CuPy out)."""
import ctypes

import numpy as np
import pytest

import gemmlab as gl
from gemmlab.kernels import driver_launch, launch


def _word_at(address):
    return ctypes.c_int64.from_address(address).value


def test_param_block_lays_out_four_arrays_as_numba_does():
    M, N, K = 7, 5, 3
    block = driver_launch.ParamBlock(M, N, K)
    params = block.fill([0x1000, 0x2000, 0x3000, 0x4000], 2.0, -0.5)
    assert len(params) == 4 * 9 + 2
    words = [_word_at(params[i]) for i in range(36)]
    for i, (rows, cols, data) in enumerate([(M, K, 0x1000), (K, N, 0x2000), (M, N, 0x3000),
                                            (M, N, 0x4000)]):
        meminfo, parent, nitems, itemsize, ptr, r, c, s0, s1 = words[9 * i: 9 * i + 9]
        assert (meminfo, parent) == (0, 0)
        assert (nitems, itemsize, ptr) == (rows * cols, 4, data)
        assert (r, c, s0, s1) == (rows, cols, cols * 4, 4)
    assert ctypes.c_float.from_address(params[36]).value == 2.0
    assert ctypes.c_float.from_address(params[37]).value == -0.5


def test_refilling_changes_only_pointers_and_scalars():
    block = driver_launch.ParamBlock(4, 6, 8)
    first = [_word_at(a) for a in block.fill([1, 2, 3, 4], 1.0, 0.0)[:36]]
    second = [_word_at(a) for a in block.fill([9, 8, 7, 6], 3.0, 1.0)[:36]]
    changed = [i for i, (a, b) in enumerate(zip(first, second, strict=True)) if a != b]
    assert changed == [4, 13, 22, 31]
    assert ctypes.c_float.from_address(block.params[36]).value == 3.0


def test_numba_passes_an_array_as_these_nine_words():
    """The layout is numba's own: its dispatcher flattens a 2-D array into the same nine values
    (read from numba's source, so a numba that changes it fails here, not on a GPU)."""
    import pathlib

    import numba_cuda
    source = (pathlib.Path(numba_cuda.__file__).parent / "numba" / "cuda" / "dispatcher.py"
              ).read_text()
    body = source[source.index("def _prepare_args"):]
    body = body[:body.index("elif isinstance(ty, types.CPointer)")]
    appended = ["kernelargs.append(meminfo)", "kernelargs.append(parent)",
                "kernelargs.append(devary.size)", "kernelargs.append(itemsize",
                "kernelargs.append(devary.ptr)", "kernelargs.extend(shape", "strides_in_bytes"]
    positions = [body.index(text) for text in appended]
    assert positions == sorted(positions)
    assert body.count("kernelargs.append") + body.count("kernelargs.extend") == 7


needs_gpu = pytest.mark.skipif(gl.device.backend() != "gpu", reason="needs a GPU")


@needs_gpu
@pytest.mark.parametrize("name", gl.kernels.names())
def test_driver_launch_matches_float64_at_odd_shapes(name):
    import cupy
    rng = np.random.default_rng()
    M, N, K = 131, 77, 45
    A = rng.standard_normal((M, K)).astype(np.float32)
    B = rng.standard_normal((K, N)).astype(np.float32)
    C = rng.standard_normal((M, N)).astype(np.float32)
    out = gl.gemm(cupy.asarray(A), cupy.asarray(B), cupy.asarray(C), alpha=1.5, beta=-0.25,
                  kernel=name)
    assert isinstance(out, cupy.ndarray) and out.shape == (M, N)
    ref = 1.5 * A.astype(np.float64) @ B - 0.25 * C
    np.testing.assert_allclose(cupy.asnumpy(out), ref, rtol=1e-4, atol=1e-4)


@needs_gpu
def test_driver_launch_is_the_path_a_gpu_call_takes():
    import cupy
    launch.clear_launch_cache()
    A = cupy.ones((64, 32), dtype=cupy.float32)
    gl.gemm(A, cupy.ones((32, 48), dtype=cupy.float32), kernel="unrolled")
    assert launch.driver_launch.cache_info().currsize == 1
    assert launch.launch_configuration.cache_info().currsize == 0


class _CupyLike:
    """A CuPy-shaped array: ``flags.c_contiguous``, and a ``__cuda_array_interface__`` property
    that counts how often it is built (CuPy builds a dict on each access)."""
    builds = 0

    def __init__(self, shape, contiguous=True):
        self.shape, self.ndim, self.dtype = shape, len(shape), np.dtype(np.float32)
        self.flags = type("Flags", (), {"c_contiguous": contiguous})()

    @property
    def __cuda_array_interface__(self):
        type(self).builds += 1
        return {"shape": self.shape, "typestr": "<f4", "strides": None, "data": (0, False),
                "version": 3}


def test_checking_a_cupy_array_builds_no_interface_dict():
    """Part of gl.gemm's host cost per call: the checks read CuPy's flags, not its interface."""
    _CupyLike.builds = 0
    launch._check_matrix("A", _CupyLike((3, 4)))
    assert _CupyLike.builds == 0
    with pytest.raises(ValueError, match="not C-contiguous"):
        launch._check_matrix("B", _CupyLike((3, 4), contiguous=False))
    assert _CupyLike.builds == 0
