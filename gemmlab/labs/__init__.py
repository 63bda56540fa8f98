"""Where students' code runs and is checked.

Kernel labs (lessons 05, 08, 10, 11, 12; branch klabs): the student writes the GEMM kernel
``kernel(A, B, C)`` and ``check("05.lab_tiled", lab_tiled)`` runs it on an instrumented Numba
CUDA simulator (:mod:`.simulator`) at odd shapes, then names the mistake (:mod:`.feedback`).

- :mod:`.simulator`: ``simulate(kernel, grid, block, args)`` -> a trace of global and shared
  memory accesses, races, barriers and faults (out of bounds, a barrier not every thread
  reaches, an endless loop).
- :mod:`.kernel_lab`: the lab question kinds ``NAIVE``, ``TILED``, ``PINGPONG``, ``OUTER``,
  ``TWOLEVEL`` (``coerce`` / ``judge``, the grader's code-question protocol) and their launches.
- :mod:`.wmma`: the fragment API (``load_matrix_sync``, ``mma_sync``, ``store_matrix_sync``)
  and the Tensor Core lab ``12.lab_wmma``.
- :mod:`.gpu` and :mod:`.ladder`: on a GPU backend, the checks in a subprocess and the timing
  of the student's kernel beside the course's and cuBLAS; the student's own ladder.
- :mod:`.solutions`: the reference kernels, read from the solutions notebooks.
"""
import importlib

_SUBMODULES = {"simulator", "kernel_lab", "feedback", "cases", "registers", "wmma", "gpu",
               "ladder", "solutions", "watchdog"}


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'gemmlab.labs' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | _SUBMODULES)
