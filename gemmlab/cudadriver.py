"""The CUDA driver library through ctypes, for the few calls neither CuPy nor numba exposes: how
many GPUs there are and the driver's CUDA version before numba.cuda is imported (``device``,
``gemmlab doctor``, the Colab set-up), each GPU's attributes (``gpuspec``), loading the Hopper kernels and
encoding their tensor maps (``tensorcore.hopper``), and the start of an allocation for CUDA IPC
(``collectives.nvlink_ring``). Where a context is needed, CuPy owns it."""
import ctypes
import functools
import sys

NAMES = {"linux": ("libcuda.so.1", "libcuda.so"), "win32": ("nvcuda.dll",)}


@functools.lru_cache(maxsize=None)
def library():
    """The driver library, or None on a machine without an NVIDIA driver."""
    for name in NAMES.get(sys.platform, ()):
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    return None


def required():
    """The driver library, or RuntimeError saying it is missing."""
    lib = library()
    if lib is None:
        raise RuntimeError("no CUDA driver library found (libcuda): this needs a machine with an "
                           "NVIDIA GPU and its driver")
    return lib


def check(result, what, lib=None):
    """Raise RuntimeError naming the driver's error (``cuGetErrorName``) unless ``result``, a
    CUresult, is 0 (success)."""
    if result != 0:
        name = ctypes.c_char_p()
        (lib or required()).cuGetErrorName(result, ctypes.byref(name))
        raise RuntimeError(f"{what} failed: {name.value.decode() if name.value else result}")


def device_count():
    """Number of CUDA devices the driver reports (0 without a driver, or when it fails to start)."""
    lib = library()
    if lib is None:
        return 0
    count = ctypes.c_int(0)
    if lib.cuInit(0) != 0 or lib.cuDeviceGetCount(ctypes.byref(count)) != 0:
        return 0
    return count.value


def driver_version():
    """The driver's CUDA version as cuDriverGetVersion gives it (13000 for 13.0), or None."""
    lib = library()
    if lib is None:
        return None
    v = ctypes.c_int()
    return v.value if lib.cuDriverGetVersion(ctypes.byref(v)) == 0 else None
