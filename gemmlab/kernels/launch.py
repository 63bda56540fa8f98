"""``gemm()``: the one entry point to the kernel ladder. It checks its inputs, picks the rung and
its tiles, launches, and hands the result back in the form the inputs came in.

    C_out = gl.gemm(A, B)                               # A @ B, with the default rung "tiled"
    C_out = gl.gemm(A, B, C, alpha=2.0, beta=0.5, kernel="outer", BM=64, BN=64)

The input ``C`` is never overwritten: the result is a new array (NumPy in, NumPy out; CuPy in,
CuPy out; another CUDA device array in, a numba device array out).

The launch configuration (the rung's validated plan, its compiled kernel and the grid for the
shape) is made once per rung, tiles, shape and backend and kept (:func:`launch_configuration`):
a second call of the same GEMM pays only the input checks, the output's allocation and the
launch itself. The plan's checks cannot fail twice for the same tiles. On a GPU the launch goes
through the CUDA driver from a parameter block made once per shape (driver_launch.py), not
through numba's per-call argument handling.
"""
import functools
import numbers
import sys

import numpy as np

from .. import device, simcost
from .driver_launch import DriverLaunch, device_pointer
from .rungs import get

_FLOAT32 = np.dtype(np.float32)


def _is_device_array(x):
    """A numba device array (real or simulated) or another CUDA array (CuPy, PyTorch). The
    interface is looked up on the type: on CuPy's arrays it is a property that builds a dict."""
    return bool(getattr(x, "__cuda_ndarray__", False)) or hasattr(type(x), "__cuda_array_interface__")


def _check_matrix(name, x):
    """Reject what the kernels cannot read, with the fix in the message."""
    if not (isinstance(x, np.ndarray) or _is_device_array(x)):
        raise TypeError(f"{name} must be a NumPy array or a CUDA device array, got "
                        f"{type(x).__name__}: convert it with np.asarray({name}, dtype=np.float32)")
    if x.ndim != 2:
        raise ValueError(f"{name} must be a 2-D matrix, got {x.ndim}-D with shape {tuple(x.shape)}")
    dtype = x.dtype if isinstance(x.dtype, np.dtype) else np.dtype(x.dtype)
    if dtype != _FLOAT32:
        raise TypeError(f"{name} has dtype {dtype.name}; these kernels compute in "
                        f"float32: convert it with {name}.astype(np.float32)")
    if not _c_contiguous(x):
        raise ValueError(f"{name} is not C-contiguous (row-major), as a transpose or a strided "
                         f"slice is: pass np.ascontiguousarray({name}) (or a contiguous copy on "
                         f"the device)")


def _c_contiguous(x):
    if isinstance(x, np.ndarray) or getattr(x, "__cuda_ndarray__", False):
        return x.is_c_contiguous() if hasattr(x, "is_c_contiguous") else x.flags.c_contiguous
    flags = getattr(x, "flags", None)                 # CuPy's, without building the interface
    if isinstance(getattr(flags, "c_contiguous", None), bool):
        return flags.c_contiguous
    cai = x.__cuda_array_interface__
    strides = cai.get("strides")
    if strides is None:
        return True
    itemsize = np.dtype(cai["typestr"]).itemsize
    rows, cols = cai["shape"]
    return (cols <= 1 or strides[1] == itemsize) and (rows <= 1 or strides[0] == cols * itemsize)


def _check_scalar(name, value):
    if type(value) not in (float, int) and (    # the usual types skip the slower ABC check
            isinstance(value, bool) or not isinstance(value, numbers.Real)):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
    return np.float32(value)


def _check_shapes(A, B, C):
    (M, K), (K2, N) = A.shape, B.shape
    if K != K2:
        raise ValueError(f"inner dimensions differ: A is {M} x {K} (M x K) and B is {K2} x {N}; "
                         f"B must have K = {K} rows")
    if C is not None and tuple(C.shape) != (M, N):
        raise ValueError(f"C must have the shape of A B, ({M}, {N}) (M x N), got {tuple(C.shape)}")
    return M, N, K


def _to_device(cuda, x):
    """x on the device: NumPy arrays copied there; device arrays as they are (the GPU path reads
    only their address; the simulator's launch takes numba's view of them)."""
    if isinstance(x, np.ndarray):
        return cuda.to_device(x)
    if getattr(x, "__cuda_ndarray__", False) or device.backend() == "gpu":
        return x
    return cuda.as_cuda_array(x)      # CuPy and friends, through __cuda_array_interface__


@functools.lru_cache(maxsize=64)
def _default_tiles(kernel, backend):
    """(rung name, its default tiles as sorted pairs) on ``backend``: what a call without tile
    arguments uses, resolved once rather than on every call (a few microseconds of host time)."""
    rung = get(kernel)
    return rung.name, tuple(sorted(rung.resolve({}).items()))


@functools.lru_cache(maxsize=64)
def _planned(name, tiles, backend):
    """(validated plan, compiled kernel) of rung ``name`` with ``tiles`` (sorted (key, value)
    pairs, already resolved) on ``backend``: the plan's checks run once."""
    rung = get(name)
    return rung.plan(**dict(tiles)), rung.kernel(**dict(tiles))


@functools.lru_cache(maxsize=256)
def launch_configuration(name, tiles, M, N, backend):
    """The kernel of :func:`_planned` configured with its grid for an M x N output and its block:
    made once per rung, tiles, shape and backend."""
    plan, kern = _planned(name, tiles, backend)
    return kern[plan.grid(M, N), plan.block]


@functools.lru_cache(maxsize=256)
def driver_launch(name, tiles, M, N, K):
    """The kernel of :func:`_planned` for an M x N x K problem on the GPU, with its grid, block and
    parameter block, launched through the driver (:class:`DriverLaunch`)."""
    plan, kern = _planned(name, tiles, "gpu")
    return DriverLaunch(kern, plan.grid(M, N), plan.block, M, N, K)


def clear_launch_cache():
    """Forget every cached plan and configured launch (what a first call of a shape costs)."""
    launch_configuration.cache_clear()
    driver_launch.cache_clear()
    _planned.cache_clear()
    _default_tiles.cache_clear()


def _is_cupy(x):
    return type(x).__module__.startswith("cupy")


def gemm(A, B, C=None, alpha=1.0, beta=0.0, kernel="tiled", **tiles):
    """C_out = alpha A B + beta C_in with the rung ``kernel`` (see ``gl.kernels.names()``).

    A (M x K), B (K x N) and C (M x N, optional) are C-contiguous float32 NumPy or CUDA device
    arrays. ``tiles`` override the rung's default tile constants for this backend (for example
    ``T=16`` for "tiled"); blocks past 1024 threads or 48 KB of shared memory are refused.
    With ``beta == 0``, C is not read. Returns a NumPy array if no input is on the device, a CuPy
    array on a GPU if an input is a CuPy array, otherwise a numba device array.

    ``kernel="wmma"`` is the Tensor Core GEMM of lesson 12 instead (FP16 or BF16 A and B; on a
    GPU the CuPy/WMMA kernel, on the simulator its NumPy emulation): see ``gl.tensorcore.gemm``.
    ``kernel="hopper"`` (optionally ``stage="wgmma"|"tma"|"ws"|"persistent"|"pingpong"``, default
    "auto": chosen by the problem's shape) is the Hopper ladder of lesson 12's second part on an
    H100/H200: see ``gl.tensorcore.hopper_gemm``.
    """
    if kernel == "wmma":
        from .. import tensorcore
        return tensorcore.gemm(A, B, C, alpha, beta, **tiles)
    if kernel == "hopper":
        from .. import tensorcore
        return tensorcore.hopper_gemm(A, B, C, alpha, beta, **tiles)
    backend = device.backend()
    if tiles or not isinstance(kernel, str):
        rung = get(kernel)
        rung_name, tiles = rung.name, tuple(sorted(rung.resolve(tiles).items()))
    else:
        rung_name, tiles = _default_tiles(kernel, backend)
    _planned(rung_name, tiles, backend)                     # the tiles' errors come first
    _check_matrix("A", A)
    _check_matrix("B", B)
    if C is not None:
        _check_matrix("C", C)
    alpha = _check_scalar("alpha", alpha)
    beta = _check_scalar("beta", beta)
    if C is None and beta != 0:
        raise ValueError(f"beta={float(beta)} scales C_in, but no C was given: pass C, or beta=0")
    M, N, K = _check_shapes(A, B, C)
    simcost.warn_if_slow(rung_name, M, N, K)

    given = (A, B) if C is None else (A, B, C)
    on_device = not all(isinstance(x, np.ndarray) for x in given)
    cuda = device.cuda()
    if backend == "gpu" and any(_is_cupy(x) for x in given):
        # CuPy in, CuPy out, from CuPy's memory pool (a CuPy input means CuPy is imported)
        out = sys.modules["cupy"].empty((M, N), dtype=np.float32)
    else:
        out = cuda.device_array((M, N), dtype=np.float32)
    if M and N:
        dA, dB = _to_device(cuda, A), _to_device(cuda, B)
        dC = out if C is None else _to_device(cuda, C)
        if backend == "gpu":
            driver_launch(rung_name, tiles, M, N, K)(
                [device_pointer(x) for x in (dA, dB, dC, out)], alpha, beta)
        else:
            launch_configuration(rung_name, tiles, M, N, backend)(dA, dB, dC, out, alpha, beta)
    return out if on_device else out.copy_to_host()
