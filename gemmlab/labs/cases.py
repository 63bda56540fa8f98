"""Test cases of the kernel labs: odd shapes, fresh random inputs, a poisoned output.

Inputs are uniform in [-1, 1] and *distinct* (no value appears twice in A and B together, and none
is zero), so a value found in shared memory or in a register tells which element of A or B it
came from (:mod:`gemmlab.labs.registers` relies on it). The output starts as poison: random
values between 1000 and 2000, far from any product of these inputs, so an element nobody wrote,
or one that was added to instead of written (C += AB), stands out.
"""
from dataclasses import dataclass

import numpy as np

POISON_LOW, POISON_HIGH = 1000.0, 2000.0


@dataclass
class Case:
    M: int
    N: int
    K: int
    A: np.ndarray
    B: np.ndarray
    C0: np.ndarray          # the poisoned output before the run (C is a fresh copy of it)

    @property
    def label(self):
        return f"M x N x K = {self.M} x {self.N} x {self.K}"

    @property
    def shape(self):
        return f"{self.M}x{self.N}x{self.K}"

    def reference(self):
        return self.A.astype(np.float64) @ self.B.astype(np.float64)

    def tolerance(self):
        """Elementwise bound for a float32 result: K roundings of the running sum, each at most
        half an ulp of the largest partial sum, bounded by sum |a||b| (twice that, for slack)."""
        scale = np.abs(self.A.astype(np.float64)) @ np.abs(self.B.astype(np.float64))
        return 2 * max(self.K, 1) * 2.0 ** -24 * scale + 1e-30


def distinct_inputs(rng, M, N, K):
    """A (M x K) and B (K x N), float32, uniform in [-1, 1], no zero and no value twice."""
    size = M * K + K * N
    while True:
        values = rng.uniform(-1.0, 1.0, size).astype(np.float32)
        if values.all() and np.unique(values).size == size:
            return values[:M * K].reshape(M, K).copy(), values[M * K:].reshape(K, N).copy()


def make_case(M, N, K, rng):
    A, B = distinct_inputs(rng, M, N, K)
    C0 = rng.uniform(POISON_LOW, POISON_HIGH, (M, N)).astype(np.float32)
    return Case(M, N, K, A, B, C0)


def public_cases(shapes, seed):
    """The same cases every time (what a notebook's check runs): one generator per lab."""
    rng = np.random.default_rng(seed)
    return [make_case(*shape, rng) for shape in shapes]


def hidden_shapes(rng, tile, k_multiple=None):
    """Shapes drawn for the grader: a square one (where the layout mistakes show), then two with
    ragged edges in M, N and K; with ``k_multiple``, the last has K a multiple of it and a whole
    tile x tile block inside C (the case that measures reads per FMA)."""
    n = int(rng.integers(tile + 1, 2 * tile)) | 1
    shapes = [(n, n, n)]
    for last in (False, True):
        M = int(rng.integers(tile + 1 if k_multiple and last else 1, 3 * tile))
        N = int(rng.integers(tile + 2, 3 * tile))          # >1 block column: traffic shows
        if k_multiple and last:
            K = k_multiple * int(rng.integers(1, 3))
        else:
            K = int(rng.integers(1, 4 * 16))
        if M % tile == 0:
            M += 1
        shapes.append((M, N, K))
    return shapes
