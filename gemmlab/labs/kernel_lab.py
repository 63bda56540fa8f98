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

Where the kernel lives and where it is judged are apart. The process that holds the kernel (in a
graded run and in a notebook's ``check()``, a worker that ran nothing of the notebook and holds
only the kernel's part of its cell, :mod:`gemmlab.labs.kernel_source`) does three things when
asked, through :func:`gemmlab.judging.where.where_it_lives`: describe the answer (a kernel? how
many parameters?) and run it on the instrumented simulator on the cases it is sent, reporting
what it saw as plain data (:mod:`gemmlab.labs.observations`). The judging process compiles the
kernel's part of the cell for real GPUs first (:mod:`gemmlab.labs.compile`; a kernel that does
not compile never runs; in a grading run, the run's warm compile service); the cases, the
references and every check stay there too. On a GPU backend a GEMM lab's kernel is then timed on the GPU
(:mod:`gemmlab.labs.gpu`).
"""
import math
import time
from dataclasses import dataclass
from typing import NamedTuple, Optional

import numpy as np

from .. import device, doing, platforms
from ..judging import FAIL, NOT_ATTEMPTED, PASS, AnswerTypeError, where_it_lives
from ..judging.cell import CellFunction
from ..judging.verdict import count
from . import cases as cases_
from . import feedback
from .compile import argument_types, compile_meanwhile, refusal, resources
from .kernel_source import kernel_cell
from .observations import Observed
from .observe import run_observed

# Seconds one case may run on the simulator: a kernel that never ends is a FAIL by then.
CASE_LIMIT = 10.0


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


def check_parameters(count, parameters, what="kernel"):
    """An AnswerTypeError unless ``count`` (of a function's parameters) is the lab's
    ``parameters``' number."""
    if count != len(parameters):
        raise AnswerTypeError(f"your {what} takes {count} parameters; the lab calls it as "
                              f"{what}({', '.join(parameters)})")


def check_kernel(described, parameters=("A", "B", "C")):
    """An AnswerTypeError unless :func:`describe_answer` describes a kernel of ``parameters``."""
    if described["device"]:
        raise AnswerTypeError("this is a device function (@cuda.jit(device=True)); the lab "
                              "launches a kernel: decorate it with plain @cuda.jit")
    if not described["kernel"]:
        what = "a plain Python function" if described["callable"] else described["type"]
        raise AnswerTypeError(f"expected a @cuda.jit kernel, got {what}: put @cuda.jit on "
                              f"the line above `def`, and pass the kernel without calling it")
    check_parameters(described["parameters"], parameters)


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
    time_limit: float = 120.0           # for the whole check (wall clock, so that two busy cores
                                        # do not fail an honest kernel): an endless loop ends as a
                                        # FAIL
    show_resources: bool = False        # ptxas's registers, spills, shared bytes in the feedback
    archs: tuple = ((7, 5), (9, 0))     # what the kernel is compiled for (gemmlab.labs.compile)
    rung = None                         # (name, tiles) of the course kernel to time beside it
    proxy_judge = True                  # every run goes through where_it_lives: judged here

    # -- the code-question protocol -----------------------------------------------------------
    def coerce(self, answer):
        check_kernel(describe_answer(answer), self.parameters)
        return answer

    def after_check(self, question, kernel, status, text):
        """A notebook's check on a GPU backend times a GEMM kernel that passed (:mod:`.gpu`)."""
        from . import gpu
        return gpu.after_check(self, kernel, status, text)

    def worker_source(self, source, name):
        """What a worker is given to run: only the kernel's part of the cell."""
        return kernel_cell(source, name)

    def judge(self, question, kernel, rng=None):
        """(status, feedback, picture) for ``kernel``, wherever it lives: described, then run on
        the simulator on cases drawn here, and compiled for GPUs meanwhile once its first case
        shows it was written (a kernel ptxas refuses fails with ptxas' reason, whatever the run
        found; an untouched template is not attempted, with no compile); the picture is plain
        data (see :mod:`gemmlab.labs.observed`). On a GPU backend a kernel of this process goes
        to a worker on the simulator first (:mod:`gemmlab.labs.gpu`)."""
        if device.backend() != "sim" and not callable(getattr(type(kernel), "call_helper", None)):
            from . import gpu
            return gpu.judge_on_gpu(self, question, kernel, rng)
        try:
            check_kernel(where_it_lives(kernel, describe_answer), self.parameters)
        except AnswerTypeError as exc:
            return FAIL, f"{exc}.", None
        cases = self.cases(rng)
        first = argument_types(self.named(*self.arrays(cases[0]).values()))
        compiling = []
        status, text, picture = self.examine(kernel, rng, cases=cases, written=lambda: (
            compiling.append(compile_meanwhile(kernel, first, self.archs))))
        if status == NOT_ATTEMPTED:
            return status, text, picture
        compiled = compiling[0]()              # what ptxas refuses fails, whatever the run said
        if not compiled.get("ok"):
            count(0, len(cases))                # no case runs where it does not compile
            return FAIL, refusal(compiled, compiled.get("kept", "")), None
        if status == PASS:
            text += f" {question.explain}" if question.explain else ""
            if rng is None and self.rung is not None:
                text += (f" (On a GPU this check also times your kernel beside the course's "
                         f"`{self.rung[0]}` and cuBLAS.)")
        extra = (resources(compiled) if self.show_resources
                 else platforms.not_checked(compiled.get("unchecked")))
        if extra:
            text += f" {extra}"
        return status, text, picture

    # -- the checks ---------------------------------------------------------------------------
    def verdict(self, kernel, rng=None, arguments=None):
        """(status, feedback) for ``kernel`` (not compiled here) on this lab's public cases (rng
        None) or on hidden cases drawn from ``rng``; see :meth:`examine`."""
        return self.examine(kernel, rng, arguments)[:2]

    def examine(self, kernel, rng=None, arguments=None, cases=None, written=lambda: None):
        """The :class:`Examination` of ``kernel`` (on ``cases`` if given): the first case that
        fails names the mistake, and the picture shows that run (on a pass: the first case's);
        on hidden cases every case is run while time is left, those right counted (partial credit).
        ``arguments`` maps the lab's arrays to the kernel's arguments (default: each under its
        parameter's name); ``written()`` is called once the first case shows that the kernel
        reads its inputs or writes its output."""
        deadline = time.monotonic() + self.time_limit
        runs, cases = [], cases if cases is not None else self.cases(rng)
        if feedback.unmeasured(self, cases):     # a proxy no case measures: never a PASS
            return Examination(FAIL, f"no case measured {feedback.unmeasured(self, cases)}: "
                                     f"the check cannot tell whether the kernel does what is asked.")
        failed = None
        for number, case in enumerate(cases):
            left = min(CASE_LIMIT, deadline - time.monotonic())
            if failed and (left <= 0 or rng is None):
                break                   # check(), or no time left: the rest count as wrong
            doing.step(f"case {number + 1} of {len(cases)} on the simulator")
            try:
                arrays, trace = self.run_case(kernel, case, arguments, left,
                                              schedule_of(number, rng))
            except Exception:  # past a failure, a broken run only ends the count
                if failed is None:
                    raise
                break
            if number == 0:
                if self.untouched(trace):
                    return Examination(NOT_ATTEMPTED, self.not_attempted)
                written()
            problem = self.first_problem(case, arrays, trace)
            if problem and failed is None:
                failed = Examination(FAIL, f"at {case.label}: {problem}{_wrapped(trace, runs)}",
                                     self._picture(case, trace))
            elif not problem:
                runs.append((case, arrays, trace))
        count(len(runs), len(cases))
        if failed:
            return failed
        case, _, trace = runs[0]
        return Examination(PASS, self.summary(runs), self._picture(case, trace))

    not_attempted = ("your kernel does not read its inputs nor write its output yet: write its "
                     "body and run the cell again.")

    def _picture(self, case, trace):
        if not trace.picture:
            return None
        return dict(trace.picture, lab=self.name, case=case.label)

    def run_case(self, kernel, case, arguments=None, time_limit=None, schedule=None):
        """Run ``kernel`` on one case where it lives, its threads taking turns in the order
        ``schedule`` says (:func:`schedule_of`): (the arrays after the run, by parameter name,
        and what the run did, read back from plain data). The arrays sent are copies; the ones
        after the run come back as observations."""
        arrays = self.arrays(case)
        named = [[str(name), value] for name, value in
                 (arguments or self.named)(*arrays.values())]
        grid, block = self.launch_of(case)
        picture = kernel.wants_picture if isinstance(kernel, CellFunction) else True
        data = where_it_lives(kernel, run_observed, named, _plain_dims(grid), _plain_dims(block),
                              max(time_limit or self.time_limit, 1.0), self.observers(), picture,
                              schedule)
        trace = Observed(data)
        after = {name: np.asarray(trace.outputs[name], dtype=value.dtype)
                 if name in trace.outputs else value for name, value in arrays.items()}
        return after, trace

    def named(self, *arrays):
        """The kernel's arguments: each array under its parameter's name."""
        return list(zip(self.parameters, arrays, strict=True))

    def observers(self):
        """The names of the observers that watch a run (:data:`gemmlab.labs.overlap.BUILDERS`)."""
        return []


def _wrapped(trace, runs):
    """' Note: line 7 (...): ... in int64 ...' when an integer of the failing run (or of an
    earlier case's) wrapped as the GPU's int64 wraps it (:mod:`gemmlab.labs.gpu_numbers`): Python's
    integers would have computed otherwise, and the student may not know why."""
    said = trace.wrapped or next((t.wrapped for _, _, t in runs if t.wrapped), "")
    return f" Note: {said}." if said else ""


SCHEDULES = ("forward", "reversed", "shuffled")


def schedule_of(number, rng=None):
    """The schedule of case ``number``: forward, reversed, shuffled, in turn, so a kernel whose
    answer hangs on the order of its threads (a race, a read of memory nobody wrote) meets
    another order on the next case; a shuffle is seeded by the case's number on the public
    cases, by ``rng`` on hidden ones (a grade's order cannot be known in advance)."""
    order = SCHEDULES[number % len(SCHEDULES)]
    if order != "shuffled":
        return order
    return [order, number if rng is None else int(rng.integers(1 << 31))]


def _plain_dims(d):
    return [int(v) for v in d] if isinstance(d, (tuple, list)) else [int(d)]


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
    overlap: bool = False               # tile t+1's loads issued before tile t's FMAs, stored after
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

    def observers(self):
        return [name for name, wanted in (("fragments", self.register_prefetch),
                                          ("tile_order", self.overlap)) if wanted]

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
                   one_barrier=True, overlap=True)
_MICRO = {"BM": 32, "BN": 32, "BK": 8, "TM": 4, "TN": 4}
OUTER = GemmLab("outer", tile=32, threads=(64,), per_thread=4,
                shapes=((33, 33, 33), (45, 37, 64), (70, 33, 21)), seed=10,
                rung=("outer", _MICRO), tiled=True, reads_per_fma=True, k_multiple=32,
                show_resources=True)
TWOLEVEL = GemmLab("twolevel", tile=32, threads=(64,), per_thread=4,
                   shapes=((33, 33, 33), (45, 37, 64), (70, 33, 40)), seed=11,
                   rung=("twolevel", _MICRO), tiled=True, one_barrier=True, reads_per_fma=True,
                   register_prefetch=True, k_multiple=32, overlap=True, show_resources=True)
LABS = {lab.name: lab for lab in (NAIVE, TILED, PINGPONG, OUTER, TWOLEVEL)}
