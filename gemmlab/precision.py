"""Floating-point formats, rounding and summation, for lesson 01.

Formats (names used everywhere in the course):

=========  ====  ========  ========  =====================================================
name       bits  exponent  mantissa  notes
=========  ====  ========  ========  =====================================================
fp64       64    11        52        IEEE binary64
fp32       32    8         23        IEEE binary32
tf32       19    8         10        NVIDIA TensorFloat-32: FP32's range, FP16's precision
fp16       16    5         10        IEEE binary16
bf16       16    8         7         bfloat16: FP32's range in 16 bits
fp8_e4m3   8     4         3         OCP/NVIDIA E4M3 (ml_dtypes ``float8_e4m3fn``): no inf
fp8_e5m2   8     5         2         OCP/NVIDIA E5M2 (ml_dtypes ``float8_e5m2``): IEEE-like
=========  ====  ========  ========  =====================================================

"mantissa" counts the stored fraction bits; the significand has one more (the implicit leading 1)
for normal numbers. The limits come from ``ml_dtypes.finfo`` (``np.finfo`` does not know bfloat16
or FP8); TF32 has no NumPy type, so its row is derived from its fields.

Rounding is done here, in float64, with one correctly rounded step (round to nearest, ties to
even), for every format. It does not go through ``astype``: ml_dtypes before 0.7 converted
float64 to bfloat16 and FP8 through float32, which rounds twice and can differ from the nearest
value in rare cases (``round_to(1 + 2**-8 + 2**-30, "bf16")`` is ``1.0078125``, while
``astype(bfloat16)`` of ml_dtypes 0.6 gives 1.0), so the result here does not depend on which
ml_dtypes is installed.

Overflow and special values:

* IEEE-like formats (fp32, tf32, fp16, bf16, fp8_e5m2): a value whose rounded magnitude exceeds
  the largest finite number becomes +-inf (so 65519.99 -> 65504 but 65520 -> inf in FP16, since
  65520 is the tie between 65504 and 2**16 and ties go to the even one). inf stays inf, NaN stays
  NaN.
* fp8_e4m3 (``float8_e4m3fn``, "fn" = finite and NaN only) has no infinity: the exponent field
  1111 holds normal numbers up to 448, and only S.1111.111 is NaN. Following ml_dtypes, a
  conversion is *not* saturating: a value that rounds above 448 (464 is the tie, which goes to 448;
  anything larger goes beyond) becomes NaN, and so do +-inf. Hardware conversions often offer a
  saturating mode (clamp to +-448) instead; that is a choice of the instruction, not of the format.
* TF32 is stored in an FP32 register with the low 13 bits zero. ``round_to(x, "tf32")`` rounds to
  nearest even, as the API promises; note that NVIDIA's ``cvt.rna.tf32.f32`` rounds ties *away*
  from zero and cuBLAS may simply truncate, so a tie can land on the other neighbour on a GPU.

Accumulation (``accumulate``) rounds after every addition to the accumulator format: FP16, BF16,
FP32 or FP64. TF32 and FP8 are input formats, never accumulators (Tensor Cores accumulate their
products in FP32), so they are refused with an explanation.
"""
import math
from dataclasses import dataclass

import ml_dtypes
import numpy as np

__all__ = [
    "FORMATS", "ACCUMULATORS", "ORDERS", "Format", "get_format", "format_table", "describe_formats",
    "round_to", "representable", "spacing", "bits", "encode", "from_bits", "decode", "Decoded",
    "next_up", "next_down", "accumulate", "unit_roundoff", "error_bound", "summation_errors",
]


@dataclass(frozen=True)
class Format:
    """One binary floating-point format: its fields and limits."""
    name: str
    exponent_bits: int
    mantissa_bits: int
    bias: int
    max: float            # largest finite value
    min_normal: float     # smallest positive normal value
    min_subnormal: float  # smallest positive subnormal value
    eps: float            # machine epsilon: the gap between 1 and the next larger value
    has_inf: bool         # False for fp8_e4m3 (NaN only)
    dtype: object = None  # the NumPy / ml_dtypes scalar type, None for TF32

    @property
    def bits(self):
        return 1 + self.exponent_bits + self.mantissa_bits

    @property
    def emin(self):
        """Exponent of the smallest normal number (1 - bias)."""
        return 1 - self.bias

    @property
    def emax(self):
        """Exponent of the largest finite number."""
        return math.frexp(self.max)[1] - 1

    @property
    def unit_roundoff(self):
        """u = eps / 2: the largest relative error of one rounding to nearest (normal range)."""
        return self.eps / 2

    def __str__(self):
        return (f"{self.name}: 1 sign + {self.exponent_bits} exponent + {self.mantissa_bits} mantissa "
                f"bits, bias {self.bias}, max {self.max:.6g}, min normal {self.min_normal:.6g}, "
                f"min subnormal {self.min_subnormal:.6g}, eps {self.eps:.6g}")


def _from_finfo(name, dtype, has_inf=True):
    fi = ml_dtypes.finfo(dtype)
    return Format(name=name, exponent_bits=int(fi.nexp), mantissa_bits=int(fi.nmant),
                  bias=int(1 - fi.minexp), max=float(fi.max), min_normal=float(fi.tiny),
                  min_subnormal=float(fi.smallest_subnormal), eps=float(fi.eps), has_inf=has_inf,
                  dtype=dtype)


def _tf32():
    # No NumPy type: FP32's 8-bit exponent (bias 127) with a 10-bit mantissa.
    m, bias = 10, 127
    return Format(name="tf32", exponent_bits=8, mantissa_bits=m, bias=bias,
                  max=(2 - 2.0**-m) * 2.0**127, min_normal=2.0**(1 - bias),
                  min_subnormal=2.0**(1 - bias - m), eps=2.0**-m, has_inf=True, dtype=None)


FORMATS = {
    "fp64": _from_finfo("fp64", np.float64),
    "fp32": _from_finfo("fp32", np.float32),
    "tf32": _tf32(),
    "fp16": _from_finfo("fp16", np.float16),
    "bf16": _from_finfo("bf16", ml_dtypes.bfloat16),
    "fp8_e4m3": _from_finfo("fp8_e4m3", ml_dtypes.float8_e4m3fn, has_inf=False),
    "fp8_e5m2": _from_finfo("fp8_e5m2", ml_dtypes.float8_e5m2),
}

ACCUMULATORS = ("fp16", "bf16", "fp32", "fp64")
ORDERS = ("sequential", "pairwise", "kahan")


def get_format(fmt):
    """The :class:`Format` called ``fmt`` (a name such as "fp16", or a Format itself)."""
    if isinstance(fmt, Format):
        return fmt
    if not isinstance(fmt, str):
        raise TypeError(f"a format name must be a string such as 'fp16', got {type(fmt).__name__} "
                        f"{fmt!r}; known formats: {', '.join(FORMATS)}")
    key = fmt.strip().lower()
    if key not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; known formats: {', '.join(FORMATS)}")
    return FORMATS[key]


def format_table(names=None):
    """One dict per format (fields and limits), in the order of ``names`` (all by default)."""
    rows = []
    for name in names or FORMATS:
        f = get_format(name)
        rows.append({"format": f.name, "bits": f.bits, "exponent_bits": f.exponent_bits,
                     "mantissa_bits": f.mantissa_bits, "bias": f.bias, "max": f.max,
                     "min_normal": f.min_normal, "min_subnormal": f.min_subnormal, "eps": f.eps,
                     "decimal_digits": round(f.mantissa_bits * math.log10(2) + math.log10(2), 1),
                     "has_inf": f.has_inf})
    return rows


def describe_formats(names=None):
    """The format table as aligned text, for printing in a notebook."""
    head = ("format", "bits", "exp", "mant", "bias", "max", "min normal", "min subnormal", "eps")
    lines = ["{:<9} {:>4} {:>3} {:>4} {:>5} {:>11} {:>11} {:>13} {:>10}".format(*head)]
    for r in format_table(names):
        lines.append("{:<9} {:>4} {:>3} {:>4} {:>5} {:>11.4g} {:>11.4g} {:>13.4g} {:>10.4g}".format(
            r["format"], r["bits"], r["exponent_bits"], r["mantissa_bits"], r["bias"], r["max"],
            r["min_normal"], r["min_subnormal"], r["eps"]))
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Input checks

def _as_float64(x, what="x"):
    """``x`` as a float64 array, or a TypeError that says what was expected."""
    if isinstance(x, (str, bytes)):
        raise TypeError(f"{what} must be a number or an array of numbers, got the string {x!r}")
    try:
        arr = np.asarray(x)
    except Exception as exc:  # ragged lists and the like
        raise TypeError(f"{what} must be a number or an array of numbers: {exc}") from None
    kind = arr.dtype.kind
    if kind == "V" and arr.dtype.type in (f.dtype for f in FORMATS.values()):
        return arr.astype(np.float64)
    if kind == "c":
        raise TypeError(f"{what} must be real, got complex values (dtype {arr.dtype})")
    if kind == "O" and all(isinstance(v, (int, float, np.integer, np.floating))
                           for v in arr.ravel().tolist()):
        try:                               # e.g. Python ints beyond int64
            return arr.astype(np.float64)
        except OverflowError:
            raise ValueError(f"{what} holds an integer beyond float64's range (about 1.8e308)") from None
    if kind not in "biuf":
        raise TypeError(f"{what} must be a number or an array of numbers, got "
                        f"{type(x).__name__} with dtype {arr.dtype}")
    return arr.astype(np.float64)


def _scalar(x, what="x"):
    if isinstance(x, (float, int)) and not isinstance(x, bool):
        try:
            return float(x)
        except OverflowError:          # an int beyond float64's range
            return math.copysign(math.inf, x)
    arr = _as_float64(x, what)
    if arr.size != 1:
        raise ValueError(f"{what} must be one number, got an array of shape {arr.shape}")
    return float(arr.reshape(()))


def _result(arr, like):
    """A 0-d result comes back as np.float64 (a float), an array result as an array."""
    return np.float64(arr) if np.ndim(like) == 0 else arr


# ---------------------------------------------------------------------------------------------
# Rounding

def _round64(x, f):
    """Round the float64 array ``x`` to format ``f`` (RNE), one correctly rounded step."""
    if f.name == "fp64":
        return x.copy()
    out = x.copy()
    finite = np.isfinite(x) & (x != 0)
    xf = x[finite]
    exponent = np.frexp(xf)[1] - 1                                # xf = 1.f * 2**exponent
    quantum = np.maximum(exponent, f.emin) - f.mantissa_bits     # weight of the last kept bit
    with np.errstate(over="ignore"):
        r = np.ldexp(np.rint(np.ldexp(xf, -quantum)), quantum)   # np.rint: ties to even
    over = np.abs(r) > f.max
    r[over] = np.copysign(np.inf, r[over]) if f.has_inf else np.nan
    out[finite] = r
    if not f.has_inf:
        out[np.isinf(x)] = np.nan
    return out


def _round_scalar(v, f):
    """The same rounding as :func:`_round64` for one Python float (faster for scalars)."""
    if f.name == "fp64" or v == 0 or not math.isfinite(v):
        if not f.has_inf and math.isinf(v):
            return math.nan
        return v
    quantum = max(math.frexp(v)[1] - 1, f.emin) - f.mantissa_bits
    try:
        r = math.ldexp(round(math.ldexp(v, -quantum)), quantum)   # round(): ties to even
    except OverflowError:
        r = math.copysign(math.inf, v)
    if abs(r) > f.max:
        return math.copysign(math.inf, v) if f.has_inf else math.nan
    return r


def round_to(x, fmt):
    """The values of ``fmt`` nearest to ``x`` (round to nearest, ties to even), as float64.

    ``x`` is a number or an array; the result has its shape (np.float64 for a scalar). Values
    beyond the format's range become +-inf (NaN for fp8_e4m3, which has no inf); see the module
    docstring for the exact overflow rule.
    """
    f = get_format(fmt)
    x64 = _as_float64(x)
    return _result(_round64(x64, f), x64)


def representable(x, fmt):
    """True where ``x`` is exactly a value of ``fmt`` (NaN counts as representable)."""
    x64 = _as_float64(x)
    r = _round64(x64, get_format(fmt))
    return (r == x64) | (np.isnan(r) & np.isnan(x64))


def spacing(x, fmt):
    """The ulp of ``x`` in ``fmt``: the gap between adjacent values of ``fmt`` in the binade of
    round_to(x, fmt) (its exponent range [2**e, 2**(e+1))). For 0 and subnormals it is the smallest
    subnormal; for inf and NaN it is NaN. ``spacing(2048, "fp16")`` is 2.0."""
    f = get_format(fmt)
    x64 = _as_float64(x)
    r = np.abs(_round64(x64, f))
    out = np.full(r.shape, np.nan)
    finite = np.isfinite(r)
    exponent = np.where(r[finite] > 0, np.frexp(r[finite])[1] - 1, f.emin)
    out[finite] = np.ldexp(1.0, np.maximum(exponent, f.emin) - f.mantissa_bits)
    return _result(out, x64)


# ---------------------------------------------------------------------------------------------
# Bit patterns

def encode(x, fmt):
    """The bit pattern (an int) of round_to(x, fmt). NaN is encoded as a quiet NaN (the top
    mantissa bit set; all mantissa bits for fp8_e4m3) with the sign of ``x``."""
    f = get_format(fmt)
    v = _round_scalar(_scalar(x), f)
    e_bits, m_bits = f.exponent_bits, f.mantissa_bits
    sign = int(math.copysign(1.0, v) < 0)
    e_all = (1 << e_bits) - 1
    if math.isnan(v):
        e_field, m_field = e_all, ((1 << m_bits) - 1 if not f.has_inf else 1 << (m_bits - 1))
    elif math.isinf(v):
        e_field, m_field = e_all, 0
    elif v == 0:
        e_field, m_field = 0, 0
    else:
        a = abs(v)
        exponent = math.frexp(a)[1] - 1
        if exponent < f.emin:                       # subnormal: 0.f * 2**emin
            e_field, m_field = 0, int(a / f.min_subnormal)
        else:
            e_field = exponent + f.bias
            m_field = int((a / 2.0**exponent - 1) * 2**m_bits)
    return (sign << (e_bits + m_bits)) | (e_field << m_bits) | m_field


def _pattern(pattern, f):
    """An int, or a string of 0/1 (spaces and underscores ignored), checked against the width."""
    if isinstance(pattern, str):
        digits = pattern.replace(" ", "").replace("_", "")
        if digits.startswith("0b"):
            digits = digits[2:]
        if not digits or set(digits) - {"0", "1"}:
            raise ValueError(f"a bit string may hold only 0, 1, spaces and '_', got {pattern!r}")
        if len(digits) != f.bits:
            raise ValueError(f"{f.name} has {f.bits} bits, the string {pattern!r} has {len(digits)}")
        return int(digits, 2)
    if isinstance(pattern, (bool, np.bool_)) or not isinstance(pattern, (int, np.integer)):
        raise TypeError(f"a bit pattern must be an int or a string of 0/1, got "
                        f"{type(pattern).__name__} {pattern!r}")
    pattern = int(pattern)
    if not 0 <= pattern < (1 << f.bits):
        raise ValueError(f"{f.name} patterns run from 0 to {(1 << f.bits) - 1}, got {pattern}")
    return pattern


def _fields(pattern, f):
    m_bits, e_bits = f.mantissa_bits, f.exponent_bits
    return (pattern >> (e_bits + m_bits), (pattern >> m_bits) & ((1 << e_bits) - 1),
            pattern & ((1 << m_bits) - 1))


def _category(e_field, m_field, f):
    e_all, m_all = (1 << f.exponent_bits) - 1, (1 << f.mantissa_bits) - 1
    if f.has_inf and e_field == e_all:
        return "inf" if m_field == 0 else "nan"
    if not f.has_inf and e_field == e_all and m_field == m_all:
        return "nan"
    if e_field == 0:
        return "zero" if m_field == 0 else "subnormal"
    return "normal"


def from_bits(pattern, fmt):
    """The value (a float) that the bit pattern encodes in ``fmt``: an int, or a string such as
    "0 11010 0000000001" (spaces ignored)."""
    f = get_format(fmt)
    sign, e_field, m_field = _fields(_pattern(pattern, f), f)
    cat = _category(e_field, m_field, f)
    s = -1.0 if sign else 1.0
    if cat == "nan":
        return math.copysign(math.nan, s)
    if cat == "inf":
        return s * math.inf
    if cat in ("zero", "subnormal"):
        return s * m_field * f.min_subnormal
    return s * (1 + m_field / 2**f.mantissa_bits) * 2.0**(e_field - f.bias)


def bits(x, fmt):
    """The fields of round_to(x, fmt) as "s eeeee mmmmmmmmmm" (sign, exponent, mantissa).

    >>> bits(2049, "fp16")
    '0 11010 0000000000'
    """
    f = get_format(fmt)
    sign, e_field, m_field = _fields(encode(x, f), f)
    return f"{sign} {e_field:0{f.exponent_bits}b} {m_field:0{f.mantissa_bits}b}"


def next_up(x, fmt):
    """The smallest value of ``fmt`` greater than round_to(x, fmt) (inf for the largest finite
    value of an IEEE-like format, NaN for 448 in fp8_e4m3, which has no inf; inf stays inf)."""
    f = get_format(fmt)
    v = _round_scalar(_scalar(x), f)
    if math.isnan(v) or v == math.inf:
        return v
    if v == -math.inf:
        return -f.max
    if v == 0:
        return f.min_subnormal
    p = encode(v, f)
    return from_bits(p + 1 if v > 0 else p - 1, f)


def next_down(x, fmt):
    """The largest value of ``fmt`` smaller than round_to(x, fmt)."""
    return -next_up(-_scalar(x), fmt)


@dataclass(frozen=True)
class Decoded:
    """A value of a format taken apart (see :func:`decode`)."""
    fmt: str
    value: float
    bits: str
    pattern: int
    sign: int
    exponent: int          # the stored (biased) exponent field
    mantissa: int          # the stored mantissa field
    category: str          # "normal" | "subnormal" | "zero" | "inf" | "nan"
    power: object          # the unbiased exponent e in (-1)^s x 1.f x 2^e (None for inf/NaN)
    significand: object    # 1.f for normal values, 0.f for zero/subnormal (None for inf/NaN)
    below: float           # next_down
    above: float           # next_up
    spacing: float         # ulp in the binade of value

    @property
    def formula(self):
        """The value as (-1)^s x significand x 2^power, in words."""
        if self.category in ("inf", "nan"):
            return f"{'-' if self.sign and self.category == 'inf' else ''}{self.category}"
        return f"(-1)^{self.sign} x {self.significand!r} x 2^{self.power}"

    def __str__(self):
        return (f"{self.fmt} {self.bits}  {self.category}  value {self.value!r} = {self.formula}\n"
                f"  neighbours {self.below!r} < value < {self.above!r}, spacing {self.spacing!r}")


def decode(x, fmt):
    """Take round_to(x, fmt) apart: fields, category, value, neighbours and spacing.

    ``x`` is a number, or a bit string such as "0 11010 0000000001" (read as a pattern of fmt).
    """
    f = get_format(fmt)
    if isinstance(x, str):
        value = from_bits(x, f)
    else:
        value = _round_scalar(_scalar(x), f)
    pattern = encode(value, f)
    sign, e_field, m_field = _fields(pattern, f)
    cat = _category(e_field, m_field, f)
    if cat in ("inf", "nan"):
        power = significand = None
    elif cat == "normal":
        power, significand = e_field - f.bias, 1 + m_field / 2**f.mantissa_bits
    else:
        power, significand = f.emin, m_field / 2**f.mantissa_bits
    return Decoded(fmt=f.name, value=value, bits=bits(value, f), pattern=pattern, sign=sign,
                   exponent=e_field, mantissa=m_field, category=cat, power=power,
                   significand=significand, below=next_down(value, f), above=next_up(value, f),
                   spacing=_spacing_scalar(value, f))


def _spacing_scalar(v, f):
    if not math.isfinite(v):
        return math.nan
    exponent = math.frexp(abs(v))[1] - 1 if v != 0 else f.emin
    return math.ldexp(1.0, max(exponent, f.emin) - f.mantissa_bits)


# ---------------------------------------------------------------------------------------------
# Accumulation

def _acc_format(acc):
    f = get_format(acc)
    if f.name not in ACCUMULATORS:
        why = ("Tensor Cores read TF32 inputs but accumulate their products in FP32: round the "
               "inputs with round_to(x, 'tf32') and accumulate in 'fp32'") if f.name == "tf32" else (
               "FP8 is a storage and input format; FP8 matrix instructions accumulate in FP32 (or "
               "FP16): round the inputs with round_to(x, '%s') and accumulate in 'fp32'" % f.name)
        raise ValueError(f"{f.name} is not an accumulator format ({', '.join(ACCUMULATORS)}): {why}")
    return f


def _kahan_compiled():
    global _KAHAN
    if _KAHAN is None:
        from numba import njit  # CPU Numba; imported on first use (it has no float16, hence the
                                # float64 arithmetic with an explicit rounding after every step)

        @njit(cache=False)
        def rnd(v, m_bits, emin, vmax):
            if v == 0.0 or not np.isfinite(v):
                return v
            e = math.frexp(v)[1] - 1
            q = max(e, emin) - m_bits
            r = np.rint(math.ldexp(v, -q))
            r = math.ldexp(r, q)
            if abs(r) > vmax:
                return math.copysign(math.inf, r)
            return r

        @njit(cache=False)
        def kahan(x, m_bits, emin, vmax):
            s = 0.0
            c = 0.0
            for i in range(x.size):
                y = rnd(x[i] - c, m_bits, emin, vmax)
                t = rnd(s + y, m_bits, emin, vmax)
                c = rnd(rnd(t - s, m_bits, emin, vmax) - y, m_bits, emin, vmax)
                s = t
            return s

        _KAHAN = kahan
    return _KAHAN


_KAHAN = None


def _kahan(x, f):
    """Kahan's compensated summation; every operation rounded to ``f``.

    Each operation is done in float64 and then rounded to ``f``: the operands are values of ``f``
    and float64 has at least 2p + 2 significand bits for p <= 25, so that double rounding equals
    one rounding of the exact result. For fp64 the rounding is float64's own.
    """
    if f.name == "fp64":
        m_bits, emin, vmax = 60, -10**6, math.inf   # rnd() keeps float64 values unchanged
    else:
        m_bits, emin, vmax = f.mantissa_bits, f.emin, f.max
    return float(_kahan_compiled()(np.ascontiguousarray(x, dtype=np.float64), m_bits, emin, vmax))


def accumulate(values, acc="fp32", order="sequential"):
    """The sum of ``values`` in an accumulator of format ``acc``, rounded after every addition.

    * The values are first stored in the accumulator's format (rounded to it, as loading them into
      registers of that type would). To model inputs of another format, round them first:
      ``accumulate(round_to(x, "fp16"), "fp32")`` is "FP16 inputs, FP32 accumulation".
    * ``order="sequential"``: s = fl(...fl(fl(x0 + x1) + x2)... + x[n-1]), left to right.
      Vectorised with ``np.add.accumulate`` on an array of the accumulator's dtype, which rounds
      after every step (unlike ``np.sum``, which for float16 accumulates pairwise in float32).
    * ``order="pairwise"``: adjacent pairs, then pairs of pairs, ... (a balanced tree, every
      addition rounded; an odd element out is carried up a level unchanged).
    * ``order="kahan"``: compensated summation (Kahan 1965), every operation rounded to ``acc``.

    ``acc`` is "fp16", "bf16", "fp32" or "fp64". Returns a float.
    """
    f = _acc_format(acc)
    if order not in ORDERS:
        raise ValueError(f"unknown order {order!r}; choose one of {', '.join(ORDERS)}")
    x = _round64(_as_float64(values, "values").ravel(), f)
    if x.size == 0:
        return 0.0
    if order == "kahan":
        return _kahan(x, f)
    a = x.astype(f.dtype)          # exact: x already holds values of f
    with np.errstate(over="ignore", invalid="ignore"):
        if order == "sequential":
            return float(np.add.accumulate(a)[-1])
        zero = np.zeros(1, dtype=f.dtype)
        while a.size > 1:
            if a.size % 2:
                a = np.concatenate([a, zero])
            a = a[0::2] + a[1::2]
    return float(a[0])


def unit_roundoff(fmt):
    """u = 2**-(mantissa_bits + 1) = eps / 2, the relative error bound of one rounding."""
    return get_format(fmt).unit_roundoff


def error_bound(values, acc, order="sequential"):
    """The textbook (first-order) bound on |accumulate(values, acc, order) - exact sum|.

    With u the unit roundoff of ``acc``, n values and S = sum |x_i| (of the values rounded to acc):

    * sequential: (n - 1) u S      (each partial sum is rounded once; Higham, eq. 4.4)
    * pairwise:   ceil(log2 n) u S (each value goes through ceil(log2 n) additions)
    * kahan:      2 u S            (independent of n; the full bound adds an O(n u^2) S term)

    These are worst cases, first order in u (valid while n u << 1); typical errors are far smaller
    (random rounding errors grow like sqrt(n) u S for sequential summation).
    """
    f = _acc_format(acc)
    if order not in ORDERS:
        raise ValueError(f"unknown order {order!r}; choose one of {', '.join(ORDERS)}")
    x = _round64(_as_float64(values, "values").ravel(), f)
    n, s, u = x.size, math.fsum(np.abs(x)), f.unit_roundoff
    if n <= 1:
        return 0.0
    factor = {"sequential": n - 1, "pairwise": math.ceil(math.log2(n)), "kahan": 2}[order]
    return factor * u * s


def summation_errors(ns=None, accs=("fp16", "bf16", "fp32"), orders=ORDERS, seed=0):
    """Relative summation errors against n, for the lesson's plot.

    The data are uniform random numbers in [0, 1), rounded to each accumulator's format; for each
    n the first n of them are summed. The error is |computed - exact| / sum|x|, so the bounds of
    :func:`error_bound` become (n-1)u, ceil(log2 n)u and 2u. Returns a dict with "n" (array),
    "errors" and "bounds" (dicts keyed by (acc, order), arrays over n) and "u" (dict by acc).
    """
    ns = np.asarray(ns if ns is not None else 2 ** np.arange(1, 17), dtype=np.int64)
    if ns.ndim != 1 or ns.size == 0 or ns.min() < 1:
        raise ValueError(f"ns must be a non-empty list of positive counts, got {ns!r}")
    x = np.random.default_rng(seed).random(int(ns.max()))
    errors, bounds, us = {}, {}, {}
    for acc in accs:
        xa = round_to(x, acc)
        us[acc] = unit_roundoff(acc)
        for order in orders:
            err, bnd = [], []
            for n in ns:
                part = xa[:n]
                total = math.fsum(np.abs(part))
                err.append(abs(accumulate(part, acc, order) - math.fsum(part)) / total)
                bnd.append(error_bound(part, acc, order) / total)
            errors[acc, order] = np.array(err)
            bounds[acc, order] = np.array(bnd)
    return {"n": ns, "errors": errors, "bounds": bounds, "u": us}
