"""The kernel labs of lessons 05, 08, 10 and 11: the student writes the GEMM kernel.

A lab kernel has the signature ``kernel(A, B, C)``: float32 row-major A (M x K) and B (K x N),
output C (M x N), C = A @ B. The lab fixes the launch, not the student (:class:`KernelLab`).

Where the kernel lives and where it is judged are apart. The process that holds the kernel (in a
graded run and in a notebook's ``check()``, a worker that ran nothing of the notebook and holds
only the kernel's part of its cell, :mod:`gemmlab.labs.kernel_source`) does three things when
asked, through :func:`gemmlab.judging.where.where_it_lives`: describe the answer (a kernel? how
many parameters?), compile it for real GPUs (:mod:`gemmlab.labs.compile`; a kernel that does not
compile never runs), and run it on the instrumented simulator on the cases it is sent, reporting
what it saw as plain data (:mod:`gemmlab.labs.observations`). The cases (odd shapes, fresh random
inputs, a poisoned C), the float64 reference and every check (:mod:`gemmlab.labs.feedback`) stay
in the judging process. On a GPU backend the notebook then times the kernel on the GPU
(:mod:`gemmlab.labs.gpu`).
"""
import math
import time
from dataclasses import dataclass

import numpy as np

from .. import device
from ..judging import FAIL, NOT_ATTEMPTED, PASS, AnswerTypeError, where_it_lives
from ..judging.rules import Rules
from . import cases as cases_
from . import feedback
from .compile import argument_types, compile_kernel, refusal, resources
from .kernel_source import kernel_cell
from .observations import Observed
from .observe import run_observed

# What every kernel lab's answer may not use: the course's own GEMM kernels (the kernel that
# runs is the cell's own @cuda.jit code, compiled for a GPU first).
KERNEL_RULES = Rules(names=("gemmlab.kernels",))


def student_arguments(A, B, C):
    """How the lab calls a student's kernel: kernel(A, B, C)."""
    return [("A", A), ("B", B), ("C", C)]


def ladder_arguments(A, B, C):
    """How the course's rungs are called for the same product: (A, B, C_in, C_out, 1, 0)."""
    return [("A", A), ("B", B), ("C", C), ("C", C), ("alpha", np.float32(1)),
            ("beta", np.float32(0))]


def describe_answer(answer):
    """Run helper: what the answer is, as plain data (where it lives: a worker's answer cannot be
    inspected from the judging process)."""
    options = getattr(answer, "targetoptions", None)
    py_func = getattr(answer, "py_func", None)
    code = getattr(py_func if callable(py_func) else answer, "__code__", None)
    return {"device": bool(getattr(answer, "_device", False)
                           or (isinstance(options, dict) and options.get("device"))),
            "kernel": callable(py_func), "callable": callable(answer),
            "type": type(answer).__name__,
            "parameters": int(code.co_argcount) if code is not None else -1}


def check_kernel(described):
    """An AnswerTypeError unless :func:`describe_answer` describes a three-parameter kernel."""
    if described["device"]:
        raise AnswerTypeError("this is a device function (@cuda.jit(device=True)); the lab "
                              "launches a kernel: decorate it with plain @cuda.jit")
    if not described["kernel"]:
        what = "a plain Python function" if described["callable"] else described["type"]
        raise AnswerTypeError(f"expected a @cuda.jit kernel, got {what}: put @cuda.jit on "
                              f"the line above `def`, and pass the kernel without calling it")
    if described["parameters"] != 3:
        raise AnswerTypeError(f"your kernel takes {described['parameters']} parameters; the lab "
                              f"calls it as kernel(A, B, C)")


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
    overlap: bool = False               # tile t+1's loads issued before tile t's FMAs, stored after
    show_resources: bool = False        # ptxas's registers, spills, shared bytes in the feedback
    time_limit: float = 120.0           # for the whole check (wall clock, so that two busy cores
                                        # do not fail an honest kernel): an endless loop ends as a
                                        # FAIL
    k_multiple: int = None              # hidden cases: one K a multiple of this
    proxy_judge = True                  # every run goes through where_it_lives: judged here

    # -- the code-question protocol -----------------------------------------------------------
    def coerce(self, answer):
        check_kernel(describe_answer(answer))
        return answer

    def after_check(self, question, kernel, status, text):
        """A notebook's check on a GPU backend times a kernel that passed (:mod:`.gpu`)."""
        from . import gpu
        return gpu.after_check(self, kernel, status, text)

    def worker_source(self, source, name):
        """What a worker is given to run: only the kernel's part of the cell."""
        return kernel_cell(source, name)

    def judge(self, question, kernel, rng=None):
        """(status, feedback) for ``kernel``, wherever it lives: described, compiled for GPUs,
        then run on the simulator on cases drawn here. On a GPU backend a kernel of this process
        goes to a worker on the simulator first (:mod:`gemmlab.labs.gpu`)."""
        if device.backend() != "sim" and not callable(getattr(type(kernel), "call_helper", None)):
            from . import gpu
            return gpu.judge_on_gpu(self, question, kernel, rng)
        try:
            check_kernel(where_it_lives(kernel, describe_answer))
        except AnswerTypeError as exc:
            return FAIL, f"{exc}."
        cases = self.cases(rng)
        compiled = where_it_lives(kernel, compile_kernel,
                                  argument_types(student_arguments(cases[0].A, cases[0].B,
                                                                   cases[0].C0)))
        if not compiled.get("ok"):
            return FAIL, refusal(compiled, compiled.get("kept", ""))
        status, text = self.verdict(kernel, rng, cases=cases)
        if status == PASS:
            text += f" {question.explain}" if question.explain else ""
            if rng is None:
                text += (f" (On a GPU this check also times your kernel beside the course's "
                         f"`{self.rung[0]}` and cuBLAS.)")
        if self.show_resources and status != NOT_ATTEMPTED:
            text += f" {resources(compiled)}"
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

    def verdict(self, kernel, rng=None, arguments=student_arguments, cases=None):
        """(status, feedback) for ``kernel`` (not compiled here) on this lab's public cases (rng
        None) or on hidden cases drawn from ``rng`` (or on ``cases``). ``arguments`` maps (A, B,
        C) to the kernel's arguments."""
        deadline = time.monotonic() + self.time_limit
        runs = []
        for number, case in enumerate(cases if cases is not None else self.cases(rng)):
            C, trace = self.run_case(kernel, case, arguments, deadline - time.monotonic())
            if number == 0 and feedback.untouched(trace):
                return NOT_ATTEMPTED, ("your kernel does not read A or B nor write C yet: write "
                                       "its body and run the cell again.")
            problem = feedback.first_problem(self, case, C, trace)
            if problem:
                return FAIL, f"at {case.label}: {problem}"
            runs.append((case, C, trace))
        return PASS, feedback.summary(self, runs)

    def observers(self):
        return [name for name, wanted in (("fragments", self.register_prefetch),
                                          ("tile_order", self.overlap)) if wanted]

    def run_case(self, kernel, case, arguments=student_arguments, time_limit=None):
        """Run ``kernel`` on one case where it lives: (C after the run, what the run did, read
        back from plain data). The arrays sent are copies; C comes back as an observation."""
        grid, block = self.launch(case.M, case.N)
        named = [[name, value] for name, value in arguments(case.A.copy(), case.B.copy(),
                                                             case.C0.copy())]
        data = where_it_lives(kernel, run_observed, named, list(grid), list(block),
                              max(time_limit or self.time_limit, 1.0), self.observers())
        trace = Observed(data)
        return np.array(trace.outputs["C"], dtype=np.float32), trace


NAIVE = KernelLab("naive", 16, (16, 16), 1, ((19, 19, 19), (37, 21, 13), (6, 35, 40)),
                  seed=5, rung=("naive", {"BX": 16, "BY": 16}), fixed_owner=True)
TILED = KernelLab("tiled", 16, (16, 16), 1, ((19, 19, 19), (37, 35, 21), (6, 40, 50)),
                  seed=6, rung=("tiled", {"T": 16}), fixed_owner=True, tiled=True)
PINGPONG = KernelLab("pingpong", 16, (16, 16), 1, ((19, 19, 19), (37, 35, 40), (6, 40, 70)),
                     seed=8, rung=("tiled", {"T": 16}), fixed_owner=True, tiled=True,
                     one_barrier=True, overlap=True)
_MICRO = {"BM": 32, "BN": 32, "BK": 8, "TM": 4, "TN": 4}
OUTER = KernelLab("outer", 32, (64,), 4, ((33, 33, 33), (45, 37, 64), (70, 33, 21)),
                  seed=10, rung=("outer", _MICRO), tiled=True, reads_per_fma=True,
                  k_multiple=32, show_resources=True)
TWOLEVEL = KernelLab("twolevel", 32, (64,), 4, ((33, 33, 33), (45, 37, 64), (70, 33, 40)),
                     seed=11, rung=("twolevel", _MICRO), tiled=True, one_barrier=True,
                     reads_per_fma=True, register_prefetch=True, k_multiple=32, overlap=True,
                     show_resources=True)
LABS = {lab.name: lab for lab in (NAIVE, TILED, PINGPONG, OUTER, TWOLEVEL)}
