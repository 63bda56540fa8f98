"""gemmlab: the helper package of the GEMM course workbook.

Import this package before anything that imports ``numba.cuda``: ``gemmlab.device`` picks the
backend (real GPU or Numba's CUDA simulator) and Numba reads that choice only once, on its first
import. Submodules load lazily on first attribute access, so ``import gemmlab`` stays fast and
a lesson pays only for what it uses.
"""
import importlib

from . import device

__version__ = "0.1.0"

_SUBMODULES = {
    "precision", "perfmodel", "kernels", "bench", "tensorcore", "collectives", "parallel",
    "grading", "viz", "accumulate_kernels", "glossary", "measure",
}


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    if name == "gemm":
        return importlib.import_module(".gemm", __name__).gemm
    raise AttributeError(f"module 'gemmlab' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | _SUBMODULES | {"gemm"})
