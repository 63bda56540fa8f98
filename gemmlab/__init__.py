"""gemmlab: the helper package of the GEMM course workbook.

Import this package before anything that imports ``numba.cuda``: importing it picks the backend
(real GPU or Numba's CUDA simulator, :func:`gemmlab.device.backend`), and Numba reads that choice
only once, on its first import, so ``import gemmlab as gl`` followed by ``from numba import cuda``
gets the right ``cuda`` on both. Submodules load on first attribute access (``gl.kernels`` imports Numba's CUDA module, about
half a second), so ``import gemmlab`` stays fast and a lesson pays only for what it uses.
``gl.gemm`` is :func:`gemmlab.kernels.launch.gemm`, the entry point to the kernel ladder.
"""
import importlib
import importlib.metadata

from . import device

try:
    device.backend()        # chosen now, before anything can import numba.cuda
except (ValueError, RuntimeError):
    # A backend that cannot be had (GEMMLAB_BACKEND=gpu and no GPU, an unknown value): nothing is
    # chosen, and the same error comes again wherever the backend is first needed, while
    # `gemmlab doctor` and `gemmlab --version` still run and say why.
    pass

try:
    __version__ = importlib.metadata.version("gemmlab")
except importlib.metadata.PackageNotFoundError:      # run from a checkout that was never installed
    __version__ = "0.1.0+uninstalled"

_SUBMODULES = {
    "precision", "perfmodel", "kernels", "bench", "measure", "tensorcore", "collectives",
    "parallel", "grading", "judging", "viz", "glossary", "labs", "attention",
}


def __getattr__(name):
    if name == "gemm":
        from .kernels.launch import gemm
        globals()["gemm"] = gemm        # found directly from now on: gl.gemm is called in loops
        return gemm
    if name == "progress":          # gl.progress(): the student's table and bars
        from .grading.progress import progress
        return progress
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'gemmlab' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | _SUBMODULES | {"gemm", "progress"})
