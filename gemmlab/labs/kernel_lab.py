"""Kernel labs: the student writes a ``@cuda.jit`` kernel, the lab fixes its launch and judges
it on the instrumented simulator (:mod:`gemmlab.labs.simulator`).

:class:`KernelLab` is what every kernel lab shares: the code-question protocol (``coerce``,
``judge``), running each case on fresh copies of its arrays, the verdict loop (the first case
that fails ends it, with the case named) and the picture of the run (``trace.observed``, plain
data, drawn by :mod:`gemmlab.viz.kernel`). A subclass says what the kernel computes and what is
checked: its cases, launch, arrays and mistakes.

- :class:`GemmLab` (here): the GEMM labs of lessons 05, 08, 10 and 11. The kernel is
  ``kernel(A, B, C)``: float32 row-major A (M x K) and B (K x N), output C (M x N), C = A @ B.
  The check runs it at several odd shapes with fresh random inputs and a poisoned C, compares
  with a float64 reference and names the first mistake it finds (:mod:`gemmlab.labs.feedback`).
- :class:`gemmlab.labs.puzzles.Puzzle`: the warm-up puzzles of lesson 03 (map, zip, ..., prefix).

On a GPU backend the same check runs in a subprocess on the simulator, and a GEMM lab's kernel is
then timed on the GPU (:mod:`gemmlab.labs.gpu`).
"""
import math
import time
from dataclasses import dataclass
from typing import NamedTuple, Optional

import numpy as np

from .. import device
from ..judging import FAIL, NOT_ATTEMPTED, PASS, AnswerTypeError
from . import cases as cases_
from . import feedback


def ladder_arguments(A, B, C):
    """How the course's rungs are called for the same product: (A, B, C_in, C_out, 1, 0)."""
    return [("A", A), ("B", B), ("C", C), ("C", C), ("alpha", np.float32(1)),
            ("beta", np.float32(0))]


def check_parameters(fn, parameters, what="kernel"):
    """An AnswerTypeError unless ``fn`` takes exactly the lab's ``parameters``."""
    count = fn.__code__.co_argcount
    if count != len(parameters):
        raise AnswerTypeError(f"your {what} takes {count} parameters; the lab calls it as "
                              f"{what}({', '.join(parameters)})")


class Examination(NamedTuple):
    """A kernel lab's verdict with the picture of the run it is about (plain data or None)."""
    status: str
    feedback: str
    picture: Optional[dict] = None


@dataclass(frozen=True)
class KernelLab:
    """What every kernel lab shares. Subclasses give ``cases(rng)``, ``launch_of(case)``,
    ``arrays(case)`` (fresh copies, in the kernel's parameter order), ``untouched(trace)``,
    ``first_problem(case, arrays, trace)`` and ``summary(runs)``."""
    name: str
    parameters: tuple                   # the kernel's parameters, in order
    time_limit: float = 60.0            # for the whole check: an endless loop ends as a FAIL
    rung = None                         # (name, tiles) of the course kernel to time beside it

    # -- the code-question protocol -----------------------------------------------------------
    def coerce(self, answer):
        options = getattr(answer, "targetoptions", None)
        if getattr(answer, "_device", False) or (isinstance(options, dict) and options.get("device")):
            raise AnswerTypeError("this is a device function (@cuda.jit(device=True)); the lab "
                                  "launches a kernel: decorate it with plain @cuda.jit")
        if not hasattr(answer, "py_func") or not callable(getattr(answer, "py_func", None)):
            what = "a plain Python function" if callable(answer) else type(answer).__name__
            raise AnswerTypeError(f"expected a @cuda.jit kernel, got {what}: put @cuda.jit on "
                                  f"the line above `def`, and pass the kernel without calling it")
        check_parameters(answer.py_func, self.parameters)
        return answer

    def judge(self, question, kernel, rng=None):
        """(status, feedback, picture) for a kernel the grader has already passed through
        ``coerce``; the picture is plain data (see :mod:`gemmlab.labs.observed`)."""
        if device.backend() != "sim":
            from . import gpu
            return gpu.judge_on_gpu(self, question, kernel, rng)
        status, text, picture = self.examine(kernel, rng)
        if status == PASS:
            text += f" {question.explain}" if question.explain else ""
            if rng is None and self.rung is not None:
                text += (f" (On a GPU this check also times your kernel beside the course's "
                         f"`{self.rung[0]}` and cuBLAS.)")
        return status, text, picture

    # -- the checks ---------------------------------------------------------------------------
    def verdict(self, kernel, rng=None, arguments=None):
        """(status, feedback) for ``kernel`` on this lab's public cases (rng None) or on hidden
        cases drawn from ``rng``; see :meth:`examine`."""
        return self.examine(kernel, rng, arguments)[:2]

    def examine(self, kernel, rng=None, arguments=None):
        """The :class:`Examination` of ``kernel``: the first case that fails names the mistake,
        and the picture shows that run (on a pass: the first case's). ``arguments`` maps the
        lab's arrays to the kernel's arguments (default: each under its parameter's name)."""
        deadline = time.monotonic() + self.time_limit
        runs = []
        for number, case in enumerate(self.cases(rng)):
            arrays, trace = self.run_case(kernel, case, arguments, deadline - time.monotonic())
            if number == 0 and self.untouched(trace):
                return Examination(NOT_ATTEMPTED, self.not_attempted)
            problem = self.first_problem(case, arrays, trace)
            if problem:
                return Examination(FAIL, f"at {case.label}: {problem}", self._picture(case, trace))
            runs.append((case, arrays, trace))
        case, _, trace = runs[0]
        return Examination(PASS, self.summary(runs), self._picture(case, trace))

    not_attempted = ("your kernel does not read its inputs nor write its output yet: write its "
                     "body and run the cell again.")

    def _picture(self, case, trace):
        if trace.observed is None:
            return None
        return dict(trace.observed, lab=self.name, case=case.label)

    def run_case(self, kernel, case, arguments=None, time_limit=None):
        """Run ``kernel`` on one case: (the arrays after the run, by parameter name, and the
        simulator's trace)."""
        from .simulator import simulate
        arrays = self.arrays(case)
        args = (arguments or self.named)(*arrays.values())
        grid, block = self.launch_of(case)
        trace = simulate(kernel, grid, block, args,
                         time_limit=max(time_limit or self.time_limit, 1.0),
                         observer=self.observer(case))
        return arrays, trace

    def named(self, *arrays):
        """The kernel's arguments: each array under its parameter's name."""
        return list(zip(self.parameters, arrays, strict=True))

    def observer(self, case):
        return None


@dataclass(frozen=True)
class GemmLab(KernelLab):
    """A GEMM kernel lab: ``kernel(A, B, C)`` computing C = A @ B.

    Each block of ``threads`` computes a ``tile x tile`` tile of C, each thread ``per_thread x
    per_thread`` of it; the grid is (ceil(N/tile), ceil(M/tile)). With ``fixed_owner``, thread
    (x, y) of block (bx, by) owns C[by*tile + y, bx*tile + x]. The other flags are the measured
    requirements: ``tiled`` (global reads about N/tile per element of A), ``one_barrier`` (at
    most one barrier per K tile plus the prologue), ``reads_per_fma`` (at most about 0.5
    shared reads per FMA) and ``register_prefetch`` (fragments of k+1 read before the FMAs of k).
    """
    parameters: tuple = ("A", "B", "C")
    tile: int = 16
    threads: tuple = (16, 16)
    per_thread: int = 1
    shapes: tuple = ()                  # the public (M, N, K) cases, the first one square
    seed: int = 0
    rung: tuple = None                  # (name, tiles) of the course's kernel to time beside it
    fixed_owner: bool = False
    tiled: bool = False
    one_barrier: bool = False
    reads_per_fma: bool = False
    register_prefetch: bool = False
    k_multiple: int = None              # hidden cases: one K a multiple of this

    not_attempted = ("your kernel does not read A or B nor write C yet: write its body and run "
                     "the cell again.")

    def launch(self, M, N):
        """(grid, block) for an M x N output."""
        return (math.ceil(N / self.tile), math.ceil(M / self.tile)), self.threads

    def launch_of(self, case):
        return self.launch(case.M, case.N)

    def cases(self, rng=None):
        if rng is None:
            return cases_.public_cases(self.shapes, self.seed)
        shapes = cases_.hidden_shapes(rng, self.tile, k_multiple=self.k_multiple)
        return [cases_.make_case(M, N, K, rng) for M, N, K in shapes]

    def arrays(self, case):
        return {"A": case.A.copy(), "B": case.B.copy(), "C": case.C0.copy()}

    def observer(self, case):
        if self.register_prefetch:
            from .registers import FragmentObserver
            return FragmentObserver(case.A, case.B)
        return None

    def untouched(self, trace):
        return feedback.untouched(trace)

    def first_problem(self, case, arrays, trace):
        return feedback.first_problem(self, case, arrays["C"], trace)

    def summary(self, runs):
        return feedback.summary(self, runs)


NAIVE = GemmLab("naive", shapes=((19, 19, 19), (37, 21, 13), (6, 35, 40)), seed=5,
                rung=("naive", {"BX": 16, "BY": 16}), fixed_owner=True)
TILED = GemmLab("tiled", shapes=((19, 19, 19), (37, 35, 21), (6, 40, 50)), seed=6,
                rung=("tiled", {"T": 16}), fixed_owner=True, tiled=True)
PINGPONG = GemmLab("pingpong", shapes=((19, 19, 19), (37, 35, 40), (6, 40, 70)), seed=8,
                   rung=("pingpong", {"T": 16}), fixed_owner=True, tiled=True,
                   one_barrier=True)
_MICRO = {"BM": 32, "BN": 32, "BK": 8, "TM": 4, "TN": 4}
OUTER = GemmLab("outer", tile=32, threads=(64,), per_thread=4,
                shapes=((33, 33, 33), (45, 37, 64), (70, 33, 21)), seed=10,
                rung=("outer", _MICRO), tiled=True, reads_per_fma=True, k_multiple=32)
TWOLEVEL = GemmLab("twolevel", tile=32, threads=(64,), per_thread=4,
                   shapes=((33, 33, 33), (45, 37, 64), (70, 33, 40)), seed=11,
                   rung=("twolevel", _MICRO), tiled=True, one_barrier=True, reads_per_fma=True,
                   register_prefetch=True, k_multiple=32)
LABS = {lab.name: lab for lab in (NAIVE, TILED, PINGPONG, OUTER, TWOLEVEL)}
