"""What one Tensor Core MMA step does to the numbers, and how errors grow with K.

An MMA step takes 16 products a_k b_k of FP16 (or BF16) inputs and an accumulator c and returns
the new accumulator. Two models of that step are provided:

* ``"rn"`` (the textbook model, the default): the products are exact, they are added to c, and the
  result is rounded once to the accumulator format (FP32, or FP16 for the FP16-accumulator mode)
  with round-to-nearest-even. The sum is formed in float64, which is exact for the 16 products of
  16-bit inputs unless their magnitudes span more than about 30 binades; the result then differs
  from the correctly rounded one only when it lies within 2^-29 of an FP32 ulp from a tie.
* :class:`AlignTruncate` (a hardware-style model in the spirit of Fasi, Higham, Mikaitis and
  Pranesh, "Numerical behavior of NVIDIA tensor cores", PeerJ Computer Science 7:e330, 2021): in
  each group of ``block`` products, the accumulator and the products are aligned to the largest
  exponent among them, the bits below ``24 + extra_bits`` significant bits of that largest term
  are dropped (truncated), the aligned values are added exactly, and the sum is rounded once
  (``final="rz"``: toward zero, ``"rn"``: to nearest). Later work disagrees on details (Valpey et
  al., arXiv:2502.15999, 2025, report that the rounding is not round-toward-zero and that the
  5-term adder of V100-A100 carries 3 extra bits; Khattak and Mikaitis, arXiv:2512.07004, 2025,
  give bit-accurate models up to H100 and B200); the GPU probe (``probes.py``) measures which
  parameters, if any, reproduce the H200.

All inputs are assumed finite. Errors are reported normalised by sum_k |a_k b_k|, the quantity
rounding-error bounds are proportional to (it does not blow up when a dot product cancels to 0).
"""
import math
from dataclasses import dataclass

import numpy as np

from .. import precision
from .tiling import FRAG

ACCUMULATORS = ("fp32", "fp16")
INPUT_FORMATS = ("fp16", "bf16")


@dataclass(frozen=True)
class AlignTruncate:
    """Hardware-style MMA step: align to the largest term, truncate, add exactly, round once."""
    block: int = FRAG        # products fused per group (the accumulator joins every group)
    extra_bits: int = 0      # bits kept below FP32's 24-bit significand during alignment
    final: str = "rz"        # rounding of each group's sum to FP32: "rz" (toward zero) or "rn"

    def __post_init__(self):
        if self.block not in (1, 2, 4, 8, 16):
            raise ValueError(f"block must divide 16 (1, 2, 4, 8 or 16), got {self.block!r}")
        if not isinstance(self.extra_bits, int) or not 0 <= self.extra_bits <= 20:
            raise ValueError(f"extra_bits must be a whole number from 0 to 20, got {self.extra_bits!r}")
        if self.final not in ("rz", "rn"):
            raise ValueError(f"final must be 'rz' or 'rn', got {self.final!r}")

    def __str__(self):
        return f"align+truncate(block={self.block}, extra_bits={self.extra_bits}, final={self.final})"

    @property
    def label(self):
        """A short name for tables: "trunc b16 e0 rz"."""
        return f"trunc b{self.block} e{self.extra_bits} {self.final}"


def check_model(model, acc="fp32"):
    """Validate an MMA-step model ("rn" or an :class:`AlignTruncate`) for accumulator ``acc``."""
    if acc not in ACCUMULATORS:
        raise ValueError(f"accumulator {acc!r} is not modelled; use one of {', '.join(ACCUMULATORS)}")
    if isinstance(model, AlignTruncate):
        if acc != "fp32":
            raise ValueError("the align-and-truncate model describes the FP32 accumulator only")
        return model
    if model != "rn":
        raise ValueError(f"model must be 'rn' or an AlignTruncate(...), got {model!r}")
    return model


def round_toward_zero_fp32(x):
    """float64 values -> the FP32 neighbour toward zero (the truncated value)."""
    x = np.asarray(x, dtype=np.float64)
    y = x.astype(np.float32)
    too_far = np.abs(y.astype(np.float64)) > np.abs(x)
    y = np.where(too_far, np.nextafter(y, np.float32(0)), y)
    return y.astype(np.float32)


def round_to_accumulator(x, acc):
    """float64 values rounded to nearest-even in the accumulator format (float32 or float16)."""
    return np.asarray(x, dtype=np.float64).astype(np.float16 if acc == "fp16" else np.float32)


def _align_truncate_sum(terms, extra_bits):
    """Exact sum of ``terms`` (..., n) after aligning each to the largest one and truncating the
    bits below 24 + extra_bits significant bits of it. Exact in float64: every aligned term is a
    multiple of one quantum and fewer than 2^53 quanta in total."""
    _, exponent = np.frexp(terms)                       # |t| in [2^(e-1), 2^e)
    nonzero = terms != 0
    e_max = np.where(nonzero, exponent, np.iinfo(np.int32).min).max(axis=-1)
    e_max = np.where(nonzero.any(axis=-1), e_max, 0)
    quantum = np.ldexp(1.0, e_max - 24 - extra_bits)[..., None]
    return (np.trunc(terms / quantum) * quantum).sum(axis=-1)


def mma_update(products, c, model="rn", acc="fp32"):
    """One MMA step on many outputs at once: products (..., n) float64, exact; c (...) the
    accumulator (float32, or float16 for acc="fp16"). Returns the new accumulator."""
    check_model(model, acc)
    products = np.asarray(products, dtype=np.float64)
    c64 = np.asarray(c, dtype=np.float64)
    if model == "rn":
        return round_to_accumulator(c64 + products.sum(axis=-1), acc)
    for g in range(0, products.shape[-1], model.block):
        terms = np.concatenate([c64[..., None], products[..., g:g + model.block]], axis=-1)
        s = _align_truncate_sum(terms, model.extra_bits)
        c64 = (round_toward_zero_fp32(s) if model.final == "rz" else s.astype(np.float32))
        c64 = c64.astype(np.float64)
    return c64.astype(np.float32)


def round_inputs(x, fmt):
    """Values rounded to an input format, as float64 (FP16 or BF16, round to nearest even)."""
    if fmt not in INPUT_FORMATS:
        raise ValueError(f"input format {fmt!r}: expected one of {', '.join(INPUT_FORMATS)}")
    return precision.round_to(np.asarray(x, dtype=np.float64), fmt)


def blocked_dot(a, b, acc="fp32", model="rn", block=FRAG):
    """Dot products row by row, a (T, K) . b (T, K), the way a chain of MMA steps forms them:
    exact products, 16 at a time, added into an ``acc`` accumulator. Inputs are float64 arrays
    holding FP16/BF16 values. Returns float64 values of the final accumulators."""
    a = np.atleast_2d(np.asarray(a, dtype=np.float64))
    b = np.atleast_2d(np.asarray(b, dtype=np.float64))
    if a.shape != b.shape:
        raise ValueError(f"a and b must have the same shape, got {a.shape} and {b.shape}")
    T, K = a.shape
    c = np.zeros(T, dtype=np.float16 if acc == "fp16" else np.float32)
    for k0 in range(0, K, block):
        c = mma_update(a[:, k0:k0 + block] * b[:, k0:k0 + block], c, model, acc)
    return c.astype(np.float64)


def unit_roundoff(fmt):
    return precision.get_format(fmt).unit_roundoff


def accumulation_bound(K, acc="fp32", block=FRAG):
    """First-order bound on |computed - exact| / sum|a_k b_k| for a chain of ceil(K / block)
    MMA steps, each rounding once to ``acc``: ceil(K / block) * u_acc."""
    return math.ceil(K / block) * unit_roundoff(acc)


def truncation_bound(K, acc="fp32", block=FRAG):
    """A looser first-order bound, |error| / sum|a_k b_k|, that also holds for align-and-truncate
    steps (the hardware's way of adding): in each step every one of the block + 1 aligned terms
    can lose up to one unit in the last place of the largest term (2 u_fp32 relative to it), and
    an FP16 accumulator adds up to one FP16 ulp (2 u_fp16) when it is stored."""
    steps = math.ceil(K / block)
    per_step = (block + 1) * 2 * unit_roundoff("fp32")
    if acc == "fp16":
        per_step += 2 * unit_roundoff("fp16")
    return steps * per_step


def _inputs(kind, T, K, rng):
    if kind == "random":        # signs mixed: errors partly cancel, the dot product stays small
        return rng.standard_normal((T, K)), rng.standard_normal((T, K))
    if kind == "positive":      # all terms positive: the sum grows and every rounding adds up
        return rng.uniform(0, 1, (T, K)), rng.uniform(0, 1, (T, K))
    if kind == "ones":          # the lesson-01 stall, now in blocks of 16
        return np.ones((T, K)), np.ones((T, K))
    raise ValueError(f"unknown input kind {kind!r}; use 'random', 'positive' or 'ones'")


INPUT_KINDS = ("random", "positive", "ones")


def error_vs_k(k_values, inputs="random", trials=64, seed=None):
    """Errors of dot products of length K, for each K in ``k_values``, normalised by sum|a b|.

    Series (each a list, one median over ``trials`` dot products per K):
      ``fp16_fp32acc``  FP16 inputs, FP32 accumulation (the Tensor Core's mixed precision)
      ``fp16_fp16acc``  FP16 inputs, FP16 accumulation (the FP16-accumulator mode)
      ``bf16_fp32acc``  BF16 inputs, FP32 accumulation
    measured against the float64 dot product of the same rounded inputs (accumulation error
    only), and
      ``fp16_input``, ``bf16_input``  the error of rounding the inputs alone (float64 dot of the
    rounded inputs against the float64 dot of the original float64 inputs).
    """
    rng = np.random.default_rng(seed)
    out = {key: [] for key in ("fp16_fp32acc", "fp16_fp16acc", "bf16_fp32acc",
                               "fp16_input", "bf16_input")}
    for K in k_values:
        if not isinstance(K, (int, np.integer)) or K < 1:
            raise ValueError(f"every K must be a positive whole number, got {K!r}")
        a, b = _inputs(inputs, trials, int(K), rng)
        exact = np.einsum("tk,tk->t", a, b)
        scale = np.einsum("tk,tk->t", np.abs(a), np.abs(b))
        for fmt in INPUT_FORMATS:
            ar, br = round_inputs(a, fmt), round_inputs(b, fmt)
            ref = np.einsum("tk,tk->t", ar, br)
            rscale = np.einsum("tk,tk->t", np.abs(ar), np.abs(br))
            out[f"{fmt}_input"].append(float(np.median(np.abs(ref - exact) / scale)))
            accs = ("fp32", "fp16") if fmt == "fp16" else ("fp32",)
            for acc in accs:
                err = np.abs(blocked_dot(ar, br, acc) - ref) / rscale
                out[f"{fmt}_{acc}acc"].append(float(np.median(err)))
    return {"K": [int(k) for k in k_values], "inputs": inputs, "trials": trials, **out}


def ones_sum(K, acc="fp16", block=FRAG):
    """What a chain of MMA steps makes of K ones (ones row times ones column)."""
    return float(blocked_dot(np.ones((1, K)), np.ones((1, K)), acc, block=block)[0])


def ones_stall(acc="fp16", block=FRAG):
    """The value where adding ``block`` ones per step stops changing an ``acc`` accumulator:
    the first power of two whose spacing is twice the block sum (a tie that rounds back)."""
    fmt = precision.get_format(acc)
    value = 1.0
    while precision.spacing(value, acc) < 2 * block:
        value *= 2
        if value > fmt.max:
            raise ValueError(f"{acc} never stalls below its largest value with blocks of {block}")
    return value
