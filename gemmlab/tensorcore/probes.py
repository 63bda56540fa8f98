"""Probing how a Tensor Core adds: inputs whose exact answer the candidate models disagree on.

Each :class:`Probe` is one dot product of length 32 (two MMA steps) built from FP16 values chosen
so the products are exact powers of two or small multiples of them: a 1 plus terms far below
FP32's last bit, a pair that cancels, a product that FP16 cannot hold. All probes run in one GEMM:
probe p is row p of A and column p of B, and its result is D[p, p] (every element of a GEMM only
sees its own row and column).

:func:`predict` gives each candidate model's exact answer; :func:`matching_models` lists the
candidates that agree with measured results on every probe. The GPU benchmark script runs this on
the H200; on a machine without a GPU it shows what each model predicts.
"""
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .numerics import AlignTruncate, mma_update
from .tiling import FRAG

K_PROBE = 2 * FRAG

_ONE = (1.0, 1.0)


def _tiny(e):
    """(a, b) with a b = 2^-e, both normal FP16 numbers."""
    first = min(e // 2, 14)
    return (2.0 ** -first, 2.0 ** -(e - first))


@dataclass(frozen=True)
class Probe:
    name: str
    question: str
    pairs: tuple          # ((a_0, b_0), (a_1, b_1), ...), at most 32, in K order

    def vectors(self):
        a = np.zeros(K_PROBE)
        b = np.zeros(K_PROBE)
        for k, (x, y) in enumerate(self.pairs):
            a[k], b[k] = x, y
        return a, b


def _at(position, pair, filler=((0.0, 0.0),)):
    return filler * position + (pair,)


PROBES = (
    Probe("product_exact", "are products kept exact (not rounded to FP16) before they are added?",
          ((1 + 2 ** -10, 1 + 2 ** -10),)),
    Probe("round_up", "1 + 0.75 ulp: rounded up (to nearest) or cut off (toward zero)?",
          (_ONE, (3 * 2.0 ** -13, 2.0 ** -12))),
    Probe("round_up_negative", "-(1 + 0.75 ulp): the same question for a negative sum",
          ((-1.0, 1.0), (-3 * 2.0 ** -13, 2.0 ** -12))),
    Probe("just_above_half", "1 + 0.5 ulp + 0.125 ulp: does a bit three places down count?",
          (_ONE, _tiny(24), _tiny(26))),
) + tuple(
    Probe(f"swamp_{e}", f"1 + 15 terms of 2^-{e}: are bits {e - 23} place(s) below FP32's last "
                        f"bit kept while aligning?", (_ONE,) + (_tiny(e),) * 15)
    for e in (24, 25, 26, 27)
) + (
    Probe("swamp_small_first", "15 terms of 2^-24 before the 1: does the order within a step matter?",
          (_tiny(24),) * 15 + (_ONE,)),
    Probe("align_then_cancel", "2^30 - 2^30 + 1 in one step: is the 1 lost by aligning it to 2^30?",
          ((2.0 ** 15, 2.0 ** 15), (-(2.0 ** 15), 2.0 ** 15), _ONE)),
) + tuple(
    Probe(f"cancel_then_one_at_{pos}", f"2^30 - 2^30 at positions 0-1, a 1 at position {pos}: is "
                                       f"position {pos} added in the same group as 0-1?",
          ((2.0 ** 15, 2.0 ** 15), (-(2.0 ** 15), 2.0 ** 15)) + _at(pos - 2, _ONE))
    for pos in (4, 8, 16)
)

SEQUENTIAL = "sequential_fp32"
CANDIDATES = ("rn", SEQUENTIAL) + tuple(
    AlignTruncate(block, extra, final)
    for block in (4, 8, 16) for extra in (0, 1, 2, 3) for final in ("rz", "rn"))


def probe_matrices(probes=PROBES):
    """A (P x 32) and B (32 x P) in FP16 with probe p in row p of A and column p of B."""
    P = len(probes)
    A = np.zeros((P, K_PROBE))
    B = np.zeros((K_PROBE, P))
    for p, probe in enumerate(probes):
        A[p], B[:, p] = probe.vectors()
    A16, B16 = A.astype(np.float16), B.astype(np.float16)
    if not (np.array_equal(A16.astype(np.float64), A) and np.array_equal(B16.astype(np.float64), B)):
        raise AssertionError("a probe value is not exactly representable in FP16")
    return A16, B16


def read_results(D, probes=PROBES):
    """The probes' results from the GEMM output: the diagonal, by probe name."""
    return {probe.name: float(D[p, p]) for p, probe in enumerate(probes)}


def _round_fp32(q):
    """A Fraction rounded to the nearest FP32 value (ties to even), normal range."""
    if q == 0:
        return 0.0
    sign, q = (-1 if q < 0 else 1), abs(q)
    e = q.numerator.bit_length() - q.denominator.bit_length()
    if Fraction(2) ** e > q:
        e -= 1                                           # now 2^e <= q < 2^(e+1)
    quantum = Fraction(2) ** (max(e, -126) - 23)
    return sign * float(round(q / quantum) * quantum)


def predict(probe, model):
    """The exact result ``model`` gives for ``probe``: "rn" (exact sum, one rounding to nearest
    per MMA step), "sequential_fp32" (one FP32 rounding after every product, as a chain of FMAs
    does), or an :class:`~.numerics.AlignTruncate`."""
    a, b = probe.vectors()
    products = [Fraction(x) * Fraction(y) for x, y in zip(a, b, strict=True)]
    if model == "rn":
        acc = 0.0
        for k0 in range(0, K_PROBE, FRAG):
            acc = _round_fp32(Fraction(acc) + sum(products[k0:k0 + FRAG], Fraction(0)))
        return acc
    if model == SEQUENTIAL:
        acc = 0.0
        for p in products:
            acc = _round_fp32(Fraction(acc) + p)
        return acc
    if isinstance(model, AlignTruncate):
        c = np.zeros(1, dtype=np.float32)
        prods = (a * b)[None, :]                         # exact: FP16 x FP16 fits float64
        for k0 in range(0, K_PROBE, FRAG):
            c = mma_update(prods[:, k0:k0 + FRAG], c, model)
        return float(c[0])
    raise ValueError(f"unknown model {model!r}; candidates are 'rn', {SEQUENTIAL!r} or AlignTruncate")


def predictions(models=CANDIDATES, probes=PROBES):
    """{str(model): {probe name: predicted value}}."""
    return {str(m): {p.name: predict(p, m) for p in probes} for m in models}


def matching_models(measured, models=CANDIDATES, probes=PROBES):
    """The models whose predictions equal ``measured`` ({probe name: value}) on every probe,
    and for each model the probes it gets wrong."""
    wrong = {}
    for m in models:
        wrong[str(m)] = [p.name for p in probes if predict(p, m) != measured[p.name]]
    return [m for m in models if not wrong[str(m)]], wrong
