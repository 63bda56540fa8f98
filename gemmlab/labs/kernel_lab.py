"""The kernel labs of lessons 05, 08, 10 and 11: the student writes the GEMM kernel.

A lab kernel has the signature ``kernel(A, B, C)``: float32 row-major A (M x K) and B (K x N),
output C (M x N), C = A @ B. The lab fixes the launch, not the student (:class:`KernelLab`). The
check runs the kernel on the instrumented simulator (:mod:`gemmlab.labs.simulator`) at several
odd shapes with fresh random inputs and a poisoned C, compares with a float64 reference, and
names the first mistake it finds (:mod:`gemmlab.labs.feedback`). On a GPU backend the same
check runs in a subprocess on the simulator and then times the kernel on the GPU
(:mod:`gemmlab.labs.gpu`).
"""
import math
import time
from dataclasses import dataclass

import numpy as np

from .. import device
from ..judging import FAIL, NOT_ATTEMPTED, PASS, AnswerTypeError
from . import cases as cases_
from . import feedback


def student_arguments(A, B, C):
    """How the lab calls a student's kernel: kernel(A, B, C)."""
    return [("A", A), ("B", B), ("C", C)]


def ladder_arguments(A, B, C):
    """How the course's rungs are called for the same product: (A, B, C_in, C_out, 1, 0)."""
    return [("A", A), ("B", B), ("C", C), ("C", C), ("alpha", np.float32(1)),
            ("beta", np.float32(0))]


def _three_parameters(fn, what):
    count = fn.__code__.co_argcount
    if count != 3:
        raise AnswerTypeError(f"your {what} takes {count} parameters; the lab calls it as "
                              f"{what}(A, B, C)")


@dataclass(frozen=True)
class KernelLab:
    """A code-question kind (``coerce``, ``judge``) for a ``kernel(A, B, C)`` GEMM kernel.

    Each block of ``threads`` computes a ``tile x tile`` tile of C, each thread ``per_thread x
    per_thread`` of it; the grid is (ceil(N/tile), ceil(M/tile)). With ``fixed_owner``, thread
    (x, y) of block (bx, by) owns C[by*tile + y, bx*tile + x]. The other flags are the measured
    requirements: ``tiled`` (global reads about N/tile per element of A), ``one_barrier`` (at
    most one barrier per K tile plus the prologue), ``reads_per_fma`` (at most about 0.5
    shared reads per FMA) and ``register_prefetch`` (fragments of k+1 read before the FMAs of k).
    """
    name: str
    tile: int
    threads: tuple
    per_thread: int
    shapes: tuple                       # the public (M, N, K) cases, the first one square
    seed: int
    rung: tuple                         # (name, tiles) of the course's kernel to time beside it
    fixed_owner: bool = False
    tiled: bool = False
    one_barrier: bool = False
    reads_per_fma: bool = False
    register_prefetch: bool = False
    time_limit: float = 60.0            # for the whole check: an endless loop ends as a FAIL
    k_multiple: int = None              # hidden cases: one K a multiple of this

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
        _three_parameters(answer.py_func, "kernel")
        return answer

    def judge(self, question, kernel, rng=None):
        """(status, feedback) for a kernel the grader has already passed through ``coerce``."""
        if device.backend() != "sim":
            from . import gpu
            return gpu.judge_on_gpu(self, question, kernel, rng)
        status, text = self.verdict(kernel, rng)
        if status == PASS:
            text += f" {question.explain}" if question.explain else ""
            if rng is None:
                text += (f" (On a GPU this check also times your kernel beside the course's "
                         f"`{self.rung[0]}` and cuBLAS.)")
        return status, text

    # -- the checks ---------------------------------------------------------------------------
    def launch(self, M, N):
        """(grid, block) for an M x N output."""
        return (math.ceil(N / self.tile), math.ceil(M / self.tile)), self.threads

    def cases(self, rng=None):
        if rng is None:
            return cases_.public_cases(self.shapes, self.seed)
        shapes = cases_.hidden_shapes(rng, self.tile, k_multiple=self.k_multiple)
        return [cases_.make_case(M, N, K, rng) for M, N, K in shapes]

    def verdict(self, kernel, rng=None, arguments=student_arguments):
        """(status, feedback) for ``kernel`` on this lab's public cases (rng None) or on hidden
        cases drawn from ``rng``. ``arguments`` maps (A, B, C) to the kernel's arguments."""
        deadline = time.monotonic() + self.time_limit
        runs = []
        for number, case in enumerate(self.cases(rng)):
            C, trace = self.run_case(kernel, case, arguments, deadline - time.monotonic())
            if number == 0 and feedback.untouched(trace):
                return NOT_ATTEMPTED, ("your kernel does not read A or B nor write C yet: write "
                                       "its body and run the cell again.")
            problem = feedback.first_problem(self, case, C, trace)
            if problem:
                return FAIL, f"at {case.label}: {problem}"
            runs.append((case, C, trace))
        return PASS, feedback.summary(self, runs)

    def run_case(self, kernel, case, arguments=student_arguments, time_limit=None):
        """Run ``kernel`` on one case: (C after the run, the simulator's trace)."""
        from .registers import FragmentObserver
        from .simulator import simulate
        A, B, C = case.A.copy(), case.B.copy(), case.C0.copy()
        grid, block = self.launch(case.M, case.N)
        observer = FragmentObserver(case.A, case.B) if self.register_prefetch else None
        trace = simulate(kernel, grid, block, arguments(A, B, C),
                         time_limit=max(time_limit or self.time_limit, 1.0), observer=observer)
        return C, trace


NAIVE = KernelLab("naive", 16, (16, 16), 1, ((19, 19, 19), (37, 21, 13), (6, 35, 40)),
                  seed=5, rung=("naive", {"BX": 16, "BY": 16}), fixed_owner=True)
TILED = KernelLab("tiled", 16, (16, 16), 1, ((19, 19, 19), (37, 35, 21), (6, 40, 50)),
                  seed=6, rung=("tiled", {"T": 16}), fixed_owner=True, tiled=True)
PINGPONG = KernelLab("pingpong", 16, (16, 16), 1, ((19, 19, 19), (37, 35, 40), (6, 40, 70)),
                     seed=8, rung=("pingpong", {"T": 16}), fixed_owner=True, tiled=True,
                     one_barrier=True)
_MICRO = {"BM": 32, "BN": 32, "BK": 8, "TM": 4, "TN": 4}
OUTER = KernelLab("outer", 32, (64,), 4, ((33, 33, 33), (45, 37, 64), (70, 33, 21)),
                  seed=10, rung=("outer", _MICRO), tiled=True, reads_per_fma=True,
                  k_multiple=32)
TWOLEVEL = KernelLab("twolevel", 32, (64,), 4, ((33, 33, 33), (45, 37, 64), (70, 33, 40)),
                     seed=11, rung=("twolevel", _MICRO), tiled=True, one_barrier=True,
                     reads_per_fma=True, register_prefetch=True, k_multiple=32)
LABS = {lab.name: lab for lab in (NAIVE, TILED, PINGPONG, OUTER, TWOLEVEL)}
