"""Which CUDA backend the course runs on: a real NVIDIA GPU ("gpu") or Numba's simulator ("sim").

Numba reads ``NUMBA_ENABLE_CUDASIM`` once, when ``numba.cuda`` is first imported, so the choice is
made here, before that import, and every module gets ``numba.cuda`` through :func:`cuda`.
``GEMMLAB_BACKEND=sim|gpu`` overrides the automatic choice. Problem sizes differ per backend (the
simulator runs one OS thread per CUDA thread), and live in :data:`SIZES` so notebooks never
hard-code them.
"""
import functools
import importlib.metadata
import importlib.util
import os
import platform
import sys

from . import cudadriver

BACKENDS = ("gpu", "sim")

# Problem sizes the lessons use, per backend. Lessons add their own keys here.
SIZES = {
    "sim": {
        "accumulate_n": 4096,        # lesson 01: ones summed on the device, one thread per prefix
        "accumulate_threads": 8,
        "tp_tokens": 16,             # lessons 06, 09, 15: rows M of X in the sharded layers (NumPy)
        "tp_d_model": 64,            # lessons 06, 09, 15: hidden width D (FFN: D -> 4D -> D)
        "attn_seq": 32,              # lesson 14: tokens of one sequence
        "attn_d_model": 64,          # lesson 14: model width (16 heads of 4)
        # GEMM ladder (lessons 05, 08, 10, 11): problem shapes (each rung's tiles are in its file).
        "gemm_shapes": [(23, 17, 19), (5, 19, 3)],   # (M, N, K): edges off the tiles on purpose
        "gemm_n": 16,                # square size the GEMM lessons run and time
        "bench_sizes": [16, 24],     # `gemmlab bench` default square sizes
        "ring_ranks": 4,             # lesson 07: ranks of the ring stepper and the MPI runs
        "ring_items": 8,             # lesson 07: float32 values per rank in the stepper
        "allreduce_sim_items": 1 << 14,   # lesson 07: per-rank values of the simulated runs
        # bytes per rank; up to 16 MiB so the bandwidth term outweighs scheduling noise in the fit
        "allreduce_mpi_sizes": [1 << 12, 1 << 16, 1 << 20, 1 << 22, 1 << 24],
        "allreduce_mpi_repeats": 3,
        "cpu_gemm_n": 128,           # lesson 04: square size of the in-notebook CPU GEMM timing
        "cache_gemm_n": 24,          # lesson 04: loop-order traces run through the cache simulator
        "roofline_copy_mib": 64,     # lesson 04 (GPU only): device copy measured for bandwidth
        "roofline_sgemm_n": 1024,    # lesson 04 (GPU only): cuBLAS SGEMM measured for the roof
        "tc_shape": (40, 56, 72),    # lesson 12: (M, N, K) of the Tensor Core GEMM, off the tiles
        "tc_bench_n": 64,            # lesson 12: square size timed (emulation here, kernel on a GPU)
        "tc_error_trials": 32,       # lesson 12: dot products per K in the error-vs-K experiment
        "tc_error_max_k": 16384,     # lesson 12: largest K of that experiment
        "flash_shape": (19, 16),     # lesson 16: (N, d) of the worked kernel, N off the tile
    },
    "gpu": {
        "accumulate_n": 1 << 16,
        "accumulate_threads": 256,
        "tp_tokens": 256,
        "tp_d_model": 1024,
        "attn_seq": 256,
        "attn_d_model": 1024,
        "gemm_shapes": [(1031, 997, 1043), (4096, 4096, 4096)],
        "gemm_n": 4096,
        "bench_sizes": [1024, 2048, 4096],
        "ring_ranks": 4,
        "ring_items": 8,
        "allreduce_sim_items": 1 << 18,
        "allreduce_mpi_sizes": [1 << k for k in range(12, 27, 2)],   # 4 KiB .. 64 MiB
        "allreduce_mpi_repeats": 5,
        "cpu_gemm_n": 512,
        "cache_gemm_n": 48,
        "roofline_copy_mib": 1024,
        "roofline_sgemm_n": 8192,
        "tc_shape": (1031, 997, 1043),
        "tc_bench_n": 4096,
        "tc_error_trials": 64,
        "tc_error_max_k": 65536,
        "flash_shape": (1021, 64),
    },
}

# Bytes a GPU-sized problem keeps on the device at once: FP32 operands and result, plus the float64
# copies through which bench.py checks them (its reference runs in CuPy).
_GEMM_BYTES = 4 + 8
WORKING_SET = {
    "gemm_n": lambda n: 3 * n * n * _GEMM_BYTES,
    "roofline_sgemm_n": lambda n: 3 * n * n * _GEMM_BYTES,
    "tc_bench_n": lambda n: 3 * n * n * _GEMM_BYTES,
    "roofline_copy_mib": lambda mib: 2 * mib << 20,                    # source and destination
    "bench_sizes": lambda n: 3 * n * n * _GEMM_BYTES,                  # each size of the list
    "gemm_shapes": lambda s: (s[0] * s[2] + s[2] * s[1] + s[0] * s[1]) * _GEMM_BYTES,
}
MEMORY_SHARE = 4      # one problem may take at most a quarter of the GPU's memory

_backend = None
_reason = None


def _choose():
    """(backend, why): the backend this process uses and the reason, in one line."""
    forced = os.environ.get("GEMMLAB_BACKEND", "").strip().lower()
    if forced and forced not in BACKENDS:
        raise ValueError(f"GEMMLAB_BACKEND={forced!r}: expected one of {', '.join(BACKENDS)}")
    gpus = cudadriver.device_count()
    if forced == "gpu" and gpus == 0:
        raise RuntimeError(
            "GEMMLAB_BACKEND=gpu, but no NVIDIA GPU is visible to the CUDA driver. "
            "Unset GEMMLAB_BACKEND (or set it to 'sim') to run on Numba's CUDA simulator.")
    if forced:
        return forced, f"GEMMLAB_BACKEND={forced}"
    if gpus:
        return "gpu", f"the CUDA driver sees {gpus} GPU{'s' if gpus > 1 else ''}"
    if cudadriver.library() is None:
        return "sim", "no NVIDIA driver library (libcuda) on this machine"
    return "sim", "the NVIDIA driver is installed but reports no usable GPU"


def why():
    """Why this process runs on its backend, in one line (``gemmlab doctor`` prints it)."""
    backend()
    return _reason


def backend():
    """The backend in use, "gpu" or "sim", decided once per process."""
    global _backend, _reason
    if _backend is None:
        chosen, reason = _choose()
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1" if chosen == "sim" else "0"
        if not _nvidia_bindings():      # numba-cuda refuses to import without, unless told
            os.environ.setdefault("NUMBA_CUDA_USE_NVIDIA_BINDING", "0")
        if "numba.cuda" in sys.modules:
            if _numba_cuda_simulates() != (chosen == "sim"):
                raise RuntimeError(
                    "numba.cuda was imported before gemmlab and runs in the other mode; "
                    "restart the kernel and import gemmlab first.")
        elif "numba" in sys.modules:
            # Numba read its configuration when it was imported; read it again.
            sys.modules["numba"].core.config.reload_config()
        _backend, _reason = chosen, reason
    return _backend


def _nvidia_bindings():
    """Whether NVIDIA's CUDA Python bindings (cuda-bindings) are installed. numba-cuda's [cu12]
    extra brings them; macOS has no such wheel, and there numba-cuda imports only when told to
    use its own ctypes bindings (NUMBA_CUDA_USE_NVIDIA_BINDING=0), which the simulator needs no
    more than."""
    try:
        return importlib.util.find_spec("cuda.bindings") is not None
    except ImportError:     # no `cuda` package at all
        return False


def _numba_cuda_simulates():
    """Whether the numba.cuda already imported is the simulator (its jit comes from there)."""
    return sys.modules["numba.cuda"].jit.__module__.startswith("numba.cuda.simulator")


def cuda():
    """The ``numba.cuda`` module, imported after the backend is fixed."""
    backend()
    from numba import cuda as numba_cuda
    return numba_cuda


def sizes():
    """The problem sizes for the current backend (a copy: changing it changes nothing here); on a
    GPU, shrunk to fit its memory (:func:`scale_to_memory`)."""
    if backend() == "sim":
        return dict(SIZES["sim"])
    gpu = spec()
    return scale_to_memory(SIZES["gpu"], gpu.total_memory) if gpu else dict(SIZES["gpu"])


def scale_to_memory(base, total_memory):
    """``base`` with every size in :data:`WORKING_SET` halved until the problem needs at most
    1/:data:`MEMORY_SHARE` of ``total_memory`` bytes; lists keep the entries that fit (at least
    their smallest, halved as needed). A GPU of 16 GB or more keeps the H200's sizes."""
    budget = total_memory / MEMORY_SHARE
    scaled = dict(base)
    for key, need in WORKING_SET.items():
        value = scaled[key]
        if isinstance(value, list):
            fitting = [v for v in value if need(v) <= budget]
            scaled[key] = fitting or [_halve_until(min(value, key=need), need, budget)]
        else:
            scaled[key] = _halve_until(value, need, budget)
    return scaled


def _halve_until(value, need, budget):
    while need(value) > budget and (value[0] if isinstance(value, tuple) else value) > 16:
        value = tuple(v // 2 for v in value) if isinstance(value, tuple) else value // 2
    return value


@functools.lru_cache(maxsize=None)
def spec():
    """The GPU in hand (device 0) as its driver describes it (:class:`gemmlab.gpuspec.GPUSpec`), or
    None on a machine without an NVIDIA driver and GPU. Independent of the backend."""
    from . import gpuspec
    return gpuspec.from_driver(0)


def datasheet():
    """The datasheet row (``gl.perfmodel.HARDWARE``) of the GPU in hand, or None when there is no
    GPU or the table has no row for it."""
    gpu = spec()
    return gpu.datasheet if gpu else None


def package_version(dist):
    """The installed version of distribution ``dist``, or "not installed"."""
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _cupy_version():
    for dist in ("cupy", "cupy-cuda13x", "cupy-cuda12x", "cupy-cuda11x"):
        v = package_version(dist)
        if v != "not installed":
            return f"{v} ({dist})"
    return "not installed"


def versions():
    """Python's version and those of the packages the course computes with."""
    packages = ("numpy", "numba", "numba-cuda", "ml_dtypes")
    return {"python": platform.python_version(), **{d: package_version(d) for d in packages},
            "cupy": _cupy_version()}


def info():
    """What the course runs on: backend, GPU, compute capability, and package versions."""
    result = {"backend": backend(), "gpu": None, "compute_capability": None, **versions()}
    if result["backend"] == "gpu":
        dev = cuda().get_current_device()
        name = dev.name
        result["gpu"] = name.decode() if isinstance(name, bytes) else str(name)
        result["compute_capability"] = "%d.%d" % dev.compute_capability
    return result
