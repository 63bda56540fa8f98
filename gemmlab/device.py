"""Which CUDA backend the course runs on: a real NVIDIA GPU ("gpu") or Numba's simulator ("sim").

Numba reads ``NUMBA_ENABLE_CUDASIM`` once, when ``numba.cuda`` is first imported, so the choice is
made here, before that import, and every module gets ``numba.cuda`` through :func:`cuda`.
``GEMMLAB_BACKEND=sim|gpu`` overrides the automatic choice. Problem sizes differ per backend (the
simulator runs one OS thread per CUDA thread), and live in :data:`SIZES` so notebooks never
hard-code them.
"""
import ctypes
import importlib.metadata
import os
import platform
import sys

BACKENDS = ("gpu", "sim")

# Problem sizes the lessons use, per backend. Lessons add their own keys here.
SIZES = {
    "sim": {
        "accumulate_n": 4096,        # lesson 01: ones summed on the device, one thread per prefix
        "accumulate_threads": 8,
    },
    "gpu": {
        "accumulate_n": 1 << 16,
        "accumulate_threads": 256,
    },
}

_backend = None


def _gpu_count():
    """Number of CUDA devices the driver reports, without importing numba.cuda (0 if none)."""
    names = {"linux": ("libcuda.so.1", "libcuda.so"), "win32": ("nvcuda.dll",)}.get(sys.platform, ())
    for name in names:
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        count = ctypes.c_int(0)
        if lib.cuInit(0) != 0 or lib.cuDeviceGetCount(ctypes.byref(count)) != 0:
            return 0
        return count.value
    return 0


def _choose():
    forced = os.environ.get("GEMMLAB_BACKEND", "").strip().lower()
    if forced and forced not in BACKENDS:
        raise ValueError(f"GEMMLAB_BACKEND={forced!r}: expected one of {', '.join(BACKENDS)}")
    gpus = _gpu_count()
    if forced == "gpu" and gpus == 0:
        raise RuntimeError(
            "GEMMLAB_BACKEND=gpu, but no NVIDIA GPU is visible to the CUDA driver. "
            "Unset GEMMLAB_BACKEND (or set it to 'sim') to run on Numba's CUDA simulator.")
    if forced:
        return forced
    return "gpu" if gpus > 0 else "sim"


def backend():
    """The backend in use, "gpu" or "sim", decided once per process."""
    global _backend
    if _backend is None:
        chosen = _choose()
        if chosen == "sim":
            os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
        if "numba.cuda" in sys.modules and _simulating_numba() != (chosen == "sim"):
            raise RuntimeError(
                "numba.cuda was imported before gemmlab and runs in the other mode; "
                "import gemmlab first (restart the kernel).")
        _backend = chosen
    return _backend


def _simulating_numba():
    return os.environ.get("NUMBA_ENABLE_CUDASIM", "0") == "1"


def cuda():
    """The ``numba.cuda`` module, imported after the backend is fixed."""
    backend()
    from numba import cuda as numba_cuda
    return numba_cuda


def sizes():
    """The problem sizes for the current backend (a copy: changing it changes nothing here)."""
    return dict(SIZES[backend()])


def _version(dist):
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _cupy_version():
    for dist in ("cupy", "cupy-cuda13x", "cupy-cuda12x", "cupy-cuda11x"):
        v = _version(dist)
        if v != "not installed":
            return f"{v} ({dist})"
    return "not installed"


def info():
    """What the course runs on: backend, GPU, compute capability, and package versions."""
    result = {
        "backend": backend(),
        "gpu": None,
        "compute_capability": None,
        "python": platform.python_version(),
        "numpy": _version("numpy"),
        "numba": _version("numba"),
        "numba-cuda": _version("numba-cuda"),
        "ml_dtypes": _version("ml_dtypes"),
        "cupy": _cupy_version(),
    }
    if result["backend"] == "gpu":
        dev = cuda().get_current_device()
        name = dev.name
        result["gpu"] = name.decode() if isinstance(name, bytes) else str(name)
        result["compute_capability"] = "%d.%d" % dev.compute_capability
    return result
