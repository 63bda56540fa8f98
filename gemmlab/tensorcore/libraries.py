"""The libraries every speed figure is a ratio to, on the same CuPy operands in the same process:

=============================  ==============================================================
name                           what runs
=============================  ==============================================================
cupy.matmul                    cuBLAS through CuPy (its default algorithm choice)
cublaslt.autotuned (nvmath)    cuBLASLt with a plan autotuned for the shape: nvmath-python's
                               ``Matmul.plan()`` + ``autotune()`` (optional: ``[benchmark]``)
torch.matmul                   PyTorch's cuBLAS/cuBLASLt path, where PyTorch is installed
triton                         an autotuned Triton kernel (16-bit inputs only), where installed
=============================  ==============================================================

FP32 inputs run in plain FP32 everywhere (no TF32): CuPy with ``CUPY_TF32=0`` (the caller sets
it before CuPy is imported: ``gl.bench.cupy_or_none``), cuBLASLt's COMPUTE_32F, PyTorch with
TF32 off. The baseline of a shape is the fastest of them (:func:`best`).
"""
NVMATH = "cublaslt.autotuned (nvmath)"
AUTOTUNE_ITERATIONS = 10


def _cupy(A, B, out):
    import cupy
    return lambda: cupy.matmul(A, B, out=out)


def _nvmath(A, B, out):
    from nvmath.linalg.advanced import Matmul
    mm = Matmul(A, B, c=out, beta=0.0, options={"inplace": True})
    mm.plan()
    mm.autotune(iterations=AUTOTUNE_ITERATIONS)
    return mm.execute


def _torch(A, B, out):
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    a, b, c = (torch.as_tensor(x, device="cuda") for x in (A, B, out))
    return lambda: torch.matmul(a, b, out=c)


def _triton(A, B, out):
    if A.dtype.itemsize != 2:
        raise TypeError("the Triton kernel is timed on 16-bit inputs only")
    from . import triton_matmul
    return triton_matmul.launcher(A, B, out)


LIBRARIES = {"cupy.matmul": _cupy, NVMATH: _nvmath, "torch.matmul": _torch, "triton": _triton}


def launchers(A, B, out, names=None):
    """({name: zero-argument launch of out = A B}, {name: why it is not there}) for each library
    of ``names`` (default all): a library that is not installed, or refuses these operands, is
    left out with its reason (never an error: the others still give a baseline). Each launch
    has run once, so autotuning and compilation are behind it."""
    found, missing = {}, {}
    for name in names or LIBRARIES:
        try:
            launch = LIBRARIES[name](A, B, out)
            launch()
        except ImportError as exc:
            missing[name] = f"not installed ({exc.name or exc})"
        except Exception as exc:   # noqa: BLE001 - a library that cannot run here: say why
            missing[name] = f"{type(exc).__name__}: {str(exc)[:200]}"
        else:
            found[name] = launch
    return found, missing


def best(ms_by_name):
    """(name, ms) of the fastest library: the baseline every ratio is taken to."""
    if not ms_by_name:
        raise ValueError("no library was timed, so there is no baseline")
    name = min(ms_by_name, key=ms_by_name.get)
    return name, ms_by_name[name]


def versions():
    """Versions of the libraries that are installed (for the record beside the figures)."""
    import importlib.metadata as md
    found = {}
    for dist in ("cupy-cuda13x", "cupy-cuda12x", "cupy", "nvmath-python", "torch", "triton"):
        try:
            found[dist] = md.version(dist)
        except md.PackageNotFoundError:
            continue
    try:
        import cupy
        found["cublas"] = cupy.cuda.cublas.getVersion(cupy.cuda.device.get_cublas_handle())
    except Exception:   # noqa: BLE001 - no CuPy or no GPU: nothing to add
        pass
    return found
