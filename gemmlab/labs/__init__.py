"""Where students' code runs and is checked.

Kernel labs (lessons 03, 05, 08, 10, 11, 12): the student writes a kernel, e.g. the GEMM kernel
``kernel(A, B, C)``, and ``check("05.lab_tiled", lab_tiled)`` runs it on an instrumented Numba
CUDA simulator (:mod:`.simulator`) at odd shapes, then names the mistake (:mod:`.feedback`).

- :mod:`.simulator`: ``simulate(kernel, grid, block, args)`` -> a trace of global and shared
  memory accesses, races, barriers and faults (out of bounds, a barrier not every thread
  reaches, an endless loop), its numbers in the types numba gives them, as a GPU computes
  them (:mod:`.gpu_numbers`); :mod:`.observed`: one block of it as plain data, the picture that
  ``check(..., show=True)`` draws (:mod:`gemmlab.viz.kernel`); :mod:`.observe`: that picture of
  any kernel, on a GPU backend from a fresh process on the simulator.
- :mod:`.kernel_lab`: ``KernelLab``, what every kernel lab shares (``coerce`` / ``judge``, the
  code-question protocol of :mod:`gemmlab.judging`), and the GEMM labs ``NAIVE``, ``TILED``,
  ``PINGPONG``, ``OUTER``, ``TWOLEVEL`` with their launches.
- :mod:`.puzzles`, :mod:`.puzzle_cases` and :mod:`.puzzle_feedback`: lesson 03's eight warm-up
  puzzles (map .. prefix sum), kernel labs on small arrays, each typical mistake named.
- :mod:`.wmma`: the fragment API (``load_matrix_sync``, ``mma_sync``, ``store_matrix_sync``)
  and the Tensor Core lab ``12.lab_wmma``.
- :mod:`.gpu` and :mod:`.my_ladder`: on a GPU backend, the checks in a subprocess and the timing
  of the student's kernel beside the course's and cuBLAS; the student's own ladder.
- :mod:`.solutions`: the reference kernels and per-rank programs, read from the solutions
  notebooks (their only home: the package has no copy a notebook or a worker could call).
- :mod:`.kernel_source`, :mod:`.compile`, :mod:`.observations`, :mod:`.overlap`: what of a
  kernel cell runs, its compilation for real GPUs, what a run did as plain data, the ping-pong
  overlap.

Distributed labs (lessons 06, 07, 09, 13, 14, 15): the student writes the program of one rank,
run on simulated ranks (:mod:`.ranks`: one thread per rank, rendezvous sends, every message
traced, deadlocks reported with their wait-for cycle) or over MPI (:func:`run_mpi`).

- :mod:`.ring` (``07.lab_ring``), :mod:`.tensor` (``06.lab_column``, ``06.lab_row``,
  ``09.lab_ffn``, ``14.lab_attention``), :mod:`.groups` (``13.lab_groups``), :mod:`.budget`
  (``15.lab_budget``): the lab kinds; :mod:`.limits` and :mod:`.deadlock`: stopping a student's
  code and explaining a deadlock; :mod:`.mpi`: ``run_mpi(fn, np=4, size="16MiB")``.

Submodules load on first use, so ``import gemmlab`` stays fast.
"""
import importlib

_SUBMODULES = {"simulator", "observed", "observe", "kernel_lab", "feedback", "cases", "registers",
               "puzzles", "puzzle_cases", "puzzle_feedback", "wmma", "gpu",
               "my_ladder", "solutions", "watchdog", "observations", "overlap",
               "kernel_source", "compile",
               "ranks", "deadlock", "limits", "mpi", "ring", "tensor", "groups", "budget",
               "kinds"}
# names offered at the top level, and the submodule each lives in
_NAMES = {"run_mpi": "mpi", "run_ranks": "ranks", "RankComm": "ranks", "RankRun": "ranks",
          "ring_run": "ring"}


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    if name in _NAMES:
        return getattr(importlib.import_module(f".{_NAMES[name]}", __name__), name)
    raise AttributeError(f"module 'gemmlab.labs' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | _SUBMODULES | set(_NAMES))
