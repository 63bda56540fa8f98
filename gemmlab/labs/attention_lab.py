"""Lesson 16's kernels, judged on the instrumented simulator as every kernel lab is
(:class:`gemmlab.labs.kernel_lab.KernelLab`); cases in :mod:`.attention_cases`, feedback in
:mod:`.attention_feedback`. Float32 arrays, C-contiguous.

=============================  ==============================  ================================
``16.puzzle_online_softmax``   ``kernel(x, out)``              out = softmax of each row of x
                                                               (R x n), one thread per row, x
                                                               read at most twice per element
``16.puzzle_merge``            ``kernel(x, out)``              out = [m, l]: the max of x (n <=
                                                               256) and the sum of exp(x - m),
                                                               (m, l) pairs merged in shared
                                                               memory, one block of 256 threads
``16.lab_flash``               ``kernel(Q, K, V, O, causal)``  O = softmax(Q K^T / sqrt(d)) V,
                                                               fused: blocks of 8 query rows,
                                                               K/V tiles of 8 rows in shared
                                                               memory, O in registers; causal
                                                               (0 or 1) masks keys j > i
=============================  ==============================  ================================
"""
import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from . import attention_cases as cases_
from . import attention_feedback as feedback
from .kernel_lab import KernelLab


@dataclass(frozen=True)
class RowLab(KernelLab):
    """A lesson-16 kernel: ``make(rng, *size)`` builds a case, ``sizes`` are the public ones,
    ``hidden(rng)`` draws the grader's; ``tile`` names the edge the guards are about;
    ``overwrite`` says where the barrier before an overwrite belongs; ``advice(case, name, total,
    budget)`` explains too many reads."""
    parameters: tuple = ("x", "out")
    make: Callable = None
    sizes: tuple = ()
    hidden: Callable = None
    seed: int = 0
    tile: int = 32
    tolerance: float = cases_.TOLERANCE
    overwrite: str = ""
    unwritten_advice: str = ""
    advice: Callable = None
    time_limit: float = 60.0

    @property
    def output(self):
        return self.parameters[3] if "causal" in self.parameters else self.parameters[-1]

    not_attempted = ("your kernel does not read its inputs nor write its output yet: write its "
                     "body and run the cell again.")

    def cases(self, rng=None):
        if rng is None:
            rng = np.random.default_rng(self.seed)
            return [self.make(rng, *size) for size in self.sizes]
        return [self.make(rng, *size) for size in self.hidden(rng)]

    def launch_of(self, case):
        return case.grid, case.block

    def arrays(self, case):
        arrays = {name: value.copy() for name, value in case.inputs.items()}
        arrays[self.output] = case.output.copy()
        if "causal" in self.parameters:
            arrays["causal"] = np.int32(case.causal)
        return arrays

    def untouched(self, trace):
        return (trace.fault is None and not trace.arrays[self.output].thread_writes
                and not any(trace.arrays[name].thread_reads for name in self.parameters
                            if name in trace.arrays and name != self.output))

    def first_problem(self, case, arrays, trace):
        return feedback.first_problem(self, case, arrays[self.output], trace)

    def too_many_reads(self, case, name, total, budget):
        size = case.inputs[name].size
        text = (f"too many global reads: {name} was read {total} times for its {size} elements "
                f"({total / size:.2f} per element; the budget is {budget}). ")
        return text + self.advice(case, name, total, budget)

    def summary(self, runs):
        return feedback.summary(self, runs)


def _odd(rng, low, high, of):
    """An odd whole number in [low, high) that is not a multiple of ``of``."""
    while True:
        n = int(rng.integers(low, high)) | 1
        if n < high and n % of:
            return n


def _rows_advice(case, name, total, budget):
    return ("Softmax needs the whole row before it can write out, but only its max and its sum: "
            "keep both running in one pass (rescaling the sum when the max grows), then a second "
            "pass writes out. A pass for the max, one for the sum and one for out reads x three "
            "times.")


def _merge_advice(case, name, total, budget):
    return "Each thread reads its own element of x once; the merging happens in shared memory."


def _flash_advice(case, name, total, budget):
    N, d = case.inputs["Q"].shape
    full = cases_.flash_reads(N, d, False)
    if total >= 3 * budget:
        return (f"Each thread read the keys itself, about once per query row (N = {N} times), "
                f"as the unfused kernels read S back from memory row by row. In a fused kernel "
                f"the block loads each K/V tile into shared memory once and its {cases_.BR} "
                f"threads all use it: about ceil(N/{cases_.BR}) = {math.ceil(N / cases_.BR)} "
                f"reads per element.")
    if total >= 1.9 * budget:
        return ("The keys were read twice per query tile: a first pass for the max, then a "
                "second for the sum and the output? Softmax does not need the whole row first: "
                "the online softmax keeps the max running and rescales the sum and the "
                "accumulator, in one pass over the K/V tiles.")
    if case.causal and total >= full:
        return ("This causal case loaded every K/V tile, also those wholly after the query "
                "tile's last row, where every score is masked: skip those tiles (end the loop "
                "over K/V tiles at the query tile's last row), half the work and traffic at "
                "large N.")
    return (f"Load each K/V tile once per block: {budget} reads of {name} at {case.label}.")


def _flash_hidden(rng):
    """N odd and not a multiple of the tile, d 32 and 64, causal and not."""
    return [(_odd(rng, 9, 24, cases_.BR), 32, False), (_odd(rng, 9, 24, cases_.BR), 64, True),
            (_odd(rng, 9, 24, cases_.BR), 32, True)]


ONLINE_SOFTMAX = RowLab(
    "puzzle_online_softmax", make=cases_.rows_case, sizes=((37, 21), (5, 40)), seed=161,
    hidden=lambda rng: [(_odd(rng, 33, 70, 32), _odd(rng, 9, 40, 8)) for _ in range(2)],
    tile=cases_.ROW_THREADS, advice=_rows_advice)
MERGE = RowLab(
    "puzzle_merge", make=cases_.merge_case, sizes=((200,), (77,)), seed=162,
    hidden=lambda rng: [(cases_.MERGE_THREADS,), (int(rng.integers(100, 256)),)],
    tile=cases_.MERGE_THREADS, overwrite="between the levels of the tree",
    unwritten_advice="Threads past n hold the empty state: m = -inf and l = 0 (it weighs nothing "
                     "in a merge).",
    advice=_merge_advice)
FLASH = RowLab(
    "lab_flash", parameters=("Q", "K", "V", "O", "causal"), make=cases_.flash_case,
    sizes=((19, 32, False), (13, 64, True), (21, 32, True)), seed=163, hidden=_flash_hidden,
    tile=cases_.BR, overwrite="between K/V tiles",
    unwritten_advice="The last K/V tile is partial: its rows past N were never loaded. Loop "
                     "over the tile's keys inside K only (or treat the rows past N as "
                     "masked).",
    advice=_flash_advice, time_limit=120.0)
LABS = {lab.name: lab for lab in (ONLINE_SOFTMAX, MERGE, FLASH)}
