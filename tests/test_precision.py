"""gemmlab.precision against NumPy's and ml_dtypes' own casts, exhaustively where the format is
small, and against slow per-step references for the accumulation orders."""
import math
import sys

import ml_dtypes
import numpy as np
import pytest

from gemmlab import precision as P

# Building test data casts NaN bit patterns and out-of-range values on purpose.
pytestmark = pytest.mark.filterwarnings("ignore:.*encountered in cast:RuntimeWarning")

SMALL = {  # format -> (dtype, unsigned view dtype): every bit pattern can be enumerated
    "fp16": (np.float16, np.uint16),
    "bf16": (ml_dtypes.bfloat16, np.uint16),
    "fp8_e4m3": (ml_dtypes.float8_e4m3fn, np.uint8),
    "fp8_e5m2": (ml_dtypes.float8_e5m2, np.uint8),
}


def _wide_random(rng, size):
    """float64 values spread over many binades, both signs, plus exact ties of small formats."""
    mant = rng.random(size) + 1.0
    exps = rng.integers(-160, 140, size)
    return np.where(rng.random(size) < 0.5, -1, 1) * np.ldexp(mant, exps)


# --- format table ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["fp64", "fp32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2"])
def test_format_table_matches_ml_dtypes_finfo(name):
    f = P.get_format(name)
    fi = ml_dtypes.finfo(f.dtype)
    assert (f.exponent_bits, f.mantissa_bits) == (fi.nexp, fi.nmant)
    assert f.bits == fi.bits
    assert f.max == float(fi.max) and f.min_normal == float(fi.tiny)
    assert f.min_subnormal == float(fi.smallest_subnormal) and f.eps == float(fi.eps)
    assert f.unit_roundoff == f.eps / 2


def test_format_table_known_values():
    rows = {r["format"]: r for r in P.format_table()}
    assert rows["fp16"]["max"] == 65504 and rows["fp16"]["bias"] == 15
    assert rows["bf16"]["eps"] == 2**-7 and rows["fp32"]["eps"] == 2**-23
    assert rows["tf32"]["mantissa_bits"] == 10 and rows["tf32"]["exponent_bits"] == 8
    assert rows["tf32"]["bits"] == 19 and rows["tf32"]["min_normal"] == 2.0**-126
    assert rows["fp8_e4m3"]["max"] == 448 and not rows["fp8_e4m3"]["has_inf"]
    assert rows["fp8_e5m2"]["max"] == 57344
    assert "fp8_e4m3" in P.describe_formats()


# --- every bit pattern of the small formats ------------------------------------------------

@pytest.mark.parametrize("name", list(SMALL))
def test_all_bit_patterns_round_trip(name):
    dtype, utype = SMALL[name]
    f = P.get_format(name)
    patterns = np.arange(2**f.bits, dtype=np.int64)
    values = patterns.astype(utype).view(dtype).astype(np.float64)
    nan = np.isnan(values)
    # round_to leaves every value of the format unchanged (NaN stays NaN)
    r = P.round_to(values, name)
    assert np.array_equal(r[~nan], values[~nan]) and np.isnan(r[nan]).all()
    # signed zeros keep their sign
    assert np.array_equal(np.signbit(r[~nan]), np.signbit(values[~nan]))
    for p, v in zip(patterns.tolist(), values.tolist(), strict=True):
        got = P.from_bits(p, name)
        if math.isnan(v):
            assert math.isnan(got)
            assert P.decode(got, name).category == "nan"
            continue
        assert got == v and math.copysign(1, got) == math.copysign(1, v)
        assert P.encode(v, name) == p
        s = P.bits(v, name)
        assert s.replace(" ", "") == format(p, f"0{f.bits}b")
        assert [len(part) for part in s.split()] == [1, f.exponent_bits, f.mantissa_bits]


@pytest.mark.parametrize("name", list(SMALL))
def test_neighbours_and_categories_exhaustive(name):
    dtype, utype = SMALL[name]
    f = P.get_format(name)
    values = np.arange(2**f.bits).astype(utype).view(dtype).astype(np.float64)
    finite = np.unique(values[np.isfinite(values)])          # sorted, -0 and +0 merged
    for lo, hi in zip(finite[:-1], finite[1:], strict=True):
        assert P.next_up(lo, name) == hi
        assert P.next_down(hi, name) == lo
    cats = {P.decode(v, name).category for v in values.tolist()}
    expected = {"zero", "subnormal", "normal", "nan"} | ({"inf"} if f.has_inf else set())
    assert cats == expected


def test_fp32_and_fp64_bit_patterns_sampled():
    rng = np.random.default_rng(1)
    for name, utype, ftype in (("fp32", np.uint32, np.float32), ("fp64", np.uint64, np.float64)):
        width = P.get_format(name).bits
        pats = rng.integers(0, 2**63 - 1, 5000, dtype=np.int64).astype(np.uint64)
        pats = (pats << np.uint64(1)) | rng.integers(0, 2, 5000).astype(np.uint64)
        pats = pats >> np.uint64(64 - width)
        pats = np.concatenate([pats, np.array([0, 1, 2**(width - 1), 2**(width - 1) - 1],
                                              dtype=np.uint64)])
        values = pats.astype(utype).view(ftype).astype(np.float64)
        for p, v in zip(pats.tolist(), values.tolist(), strict=True):
            if math.isnan(v):
                assert math.isnan(P.from_bits(p, name))
                continue
            assert P.from_bits(p, name) == v
            assert P.encode(v, name) == p


# --- rounding against the libraries' casts ---------------------------------------------------

def test_round_to_matches_numpy_casts_from_float64():
    x = _wide_random(np.random.default_rng(2), 200_000)
    with np.errstate(over="ignore"):
        assert np.array_equal(P.round_to(x, "fp16"), x.astype(np.float16).astype(np.float64))
        assert np.array_equal(P.round_to(x, "fp32"), x.astype(np.float32).astype(np.float64))
    assert np.array_equal(P.round_to(x, "fp64"), x)


@pytest.mark.parametrize("name", ["bf16", "fp8_e4m3", "fp8_e5m2", "fp16"])
def test_round_to_matches_ml_dtypes_casts_from_float32(name):
    # ml_dtypes converts from float32 in one rounding (from float64 it goes through float32).
    dtype = SMALL[name][0]
    x = _wide_random(np.random.default_rng(3), 200_000).astype(np.float32)
    x = np.concatenate([x, np.float32(np.linspace(-600, 600, 240_001))])   # many exact ties
    with np.errstate(over="ignore", invalid="ignore"):
        want = x.astype(dtype).astype(np.float64)
    got = P.round_to(x, name)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    assert np.array_equal(got[ok], want[ok])


def test_round_to_is_one_rounding_not_two():
    # 1 + 2^-8 + 2^-30 lies just above the midpoint of 1 and 1 + 2^-7 in BF16: it rounds up.
    # Rounding to float32 first (as ml_dtypes' cast did before 0.7) gives 1 + 2^-8, a tie, and
    # then 1 by ties-to-even: the double rounding round_to must not do, whatever ml_dtypes does.
    x = 1 + 2**-8 + 2**-30
    assert P.round_to(x, "bf16") == 1 + 2**-7
    assert P.round_to(np.float32(x), "bf16") == 1.0


def test_tf32_is_fp32_with_13_low_bits_cleared():
    x = _wide_random(np.random.default_rng(4), 20_000)
    x = x[(np.abs(x) > 2.0**-126) & (np.abs(x) < 2.0**127)]
    r = P.round_to(x, "tf32")
    p32 = r.astype(np.float32).view(np.uint32)
    assert np.array_equal(r.astype(np.float32).astype(np.float64), r)      # an FP32 value
    assert not np.any(p32 & np.uint32(0x1FFF))                              # low 13 bits clear
    assert np.all(np.abs(r - x) <= P.spacing(r, "tf32") / 2)                # nearest
    assert P.bits(1 + 2**-10, "tf32") == "0 01111111 0000000001"
    assert P.round_to(1 + 2**-11, "tf32") == 1.0                            # tie -> even
    assert P.round_to(1 + 3 * 2**-11, "tf32") == 1 + 2**-9


def test_round_half_to_even_examples():
    assert list(P.round_to([2048, 2049, 2050, 2051], "fp16")) == [2048, 2048, 2050, 2052]
    assert P.round_to(2**24 + 1, "fp32") == 2**24
    assert P.round_to(2**24 + 3, "fp32") == 2**24 + 4
    assert P.round_to(4097, "fp16") == 4096
    assert P.round_to(0.5 + 2**-12, "fp16") == 0.5            # tie at spacing 2^-11 -> even
    assert P.round_to(2.0**-25, "fp16") == 0.0                 # half the smallest subnormal -> 0
    assert P.round_to(3 * 2.0**-26, "fp16") == 2.0**-24
    assert math.copysign(1, P.round_to(-2.0**-30, "fp16")) == -1  # underflow keeps the sign


def test_overflow_rules():
    assert list(P.round_to([65519.99, 65520, -65520, 1e300], "fp16")) == [65504, np.inf, -np.inf,
                                                                          np.inf]
    assert P.round_to(3.5e38, "bf16") == np.inf
    assert P.round_to(1e39, "fp32") == np.inf
    e4 = P.round_to([448, 464, 464.01, 1e6, np.inf, -np.inf, np.nan, -464], "fp8_e4m3")
    assert list(e4[:2]) == [448, 448] and np.isnan(e4[2:7]).all() and e4[7] == -448
    assert list(P.round_to([61439, 61440, np.inf], "fp8_e5m2")) == [57344, np.inf, np.inf]
    assert np.isnan(P.round_to(np.nan, "fp16"))


def test_round_to_shapes_and_types():
    assert isinstance(P.round_to(1.1, "fp16"), np.float64)
    out = P.round_to(np.ones((3, 4), dtype=np.float32), "bf16")
    assert out.shape == (3, 4) and out.dtype == np.float64
    assert P.round_to(np.array([1.5], dtype=ml_dtypes.bfloat16), "fp16")[0] == 1.5
    assert P.round_to([1, 2, 3], "fp8_e4m3").tolist() == [1, 2, 3]
    assert P.round_to(True, "fp16") == 1.0


# --- spacing, decode ------------------------------------------------------------------------

def test_spacing_matches_numpy():
    x = np.abs(_wide_random(np.random.default_rng(5), 50_000))
    for name, t in (("fp16", np.float16), ("fp32", np.float32)):
        with np.errstate(over="ignore"):
            r = P.round_to(x, name)
        ok = np.isfinite(r) & (r < P.get_format(name).max)
        assert np.array_equal(P.spacing(r[ok], name), np.spacing(r[ok].astype(t)).astype(np.float64))
    assert P.spacing(2048, "fp16") == 2 and P.spacing(2047, "fp16") == 1
    assert P.spacing(1, "bf16") == 2**-7 and P.spacing(0, "fp16") == 2.0**-24
    assert P.spacing(2**24, "fp32") == 2 and np.isnan(P.spacing(np.inf, "fp16"))


def test_decode_fields():
    d = P.decode(2049, "fp16")
    assert (d.value, d.bits, d.category) == (2048.0, "0 11010 0000000000", "normal")
    assert (d.sign, d.exponent, d.mantissa, d.power, d.significand) == (0, 26, 0, 11, 1.0)
    assert (d.below, d.above, d.spacing) == (2047.0, 2050.0, 2.0)
    assert P.decode(-0.0, "fp16").category == "zero" and P.decode(-0.0, "fp16").sign == 1
    sub = P.decode(2.0**-24, "fp16")
    assert sub.category == "subnormal" and sub.power == -14 and sub.mantissa == 1
    assert P.decode(np.inf, "fp16").category == "inf"
    assert P.decode(1e6, "fp8_e4m3").category == "nan"
    assert math.isnan(P.decode(448, "fp8_e4m3").above)        # no larger value: E4M3 has no inf
    assert P.decode("0 11010 0000000001", "fp16").value == 2050.0
    assert P.from_bits("0_11111_0000000000", "fp16") == np.inf
    assert "subnormal" in str(sub) and "2^-14" in sub.formula
    assert P.next_up(65504, "fp16") == np.inf and P.next_down(-np.inf, "fp16") == -np.inf
    assert P.next_up(-np.inf, "fp16") == -65504


# --- bad input ------------------------------------------------------------------------------

def test_bad_input_raises_clear_errors():
    with pytest.raises(ValueError, match="unknown format 'fp12'.*fp16"):
        P.round_to(1.0, "fp12")
    with pytest.raises(TypeError, match="format name"):
        P.round_to(1.0, 16)
    with pytest.raises(TypeError, match="number"):
        P.round_to("1.5", "fp16")
    with pytest.raises(TypeError, match="number"):
        P.round_to(["a", "b"], "fp16")
    with pytest.raises(TypeError, match="number"):
        P.accumulate([1.0, None], "fp16")
    with pytest.raises(TypeError, match="real"):
        P.round_to(1 + 2j, "fp32")
    with pytest.raises(ValueError, match="one number"):
        P.bits([1.0, 2.0], "fp16")
    with pytest.raises(ValueError, match="16 bits"):
        P.from_bits("0101", "fp16")
    with pytest.raises(ValueError, match="0 to 255"):
        P.from_bits(256, "fp8_e5m2")
    with pytest.raises(ValueError, match="order"):
        P.accumulate([1.0], "fp32", order="random")
    with pytest.raises(ValueError, match="not an accumulator.*FP32"):
        P.accumulate([1.0], "tf32")
    with pytest.raises(ValueError, match="not an accumulator"):
        P.accumulate([1.0], "fp8_e4m3")
    with pytest.raises(ValueError, match="unknown format"):
        P.accumulate([1.0], "int8")


# --- accumulation ---------------------------------------------------------------------------

DTYPES = {"fp16": np.float16, "bf16": ml_dtypes.bfloat16, "fp32": np.float32, "fp64": np.float64}


def _ref_sequential(x, t):
    s = t(0)
    for v in x:
        s = t(s + t(v))
    return float(s)


def _ref_pairwise(x, t):
    level = [t(v) for v in x]
    while len(level) > 1:
        nxt = [t(level[i] + level[i + 1]) for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return float(level[0])


def _ref_kahan(x, t):
    s, c = t(0), t(0)
    for v in x:
        y = t(t(v) - c)
        u = t(s + y)
        c = t(t(u - s) - y)
        s = u
    return float(s)


REFS = {"sequential": _ref_sequential, "pairwise": _ref_pairwise, "kahan": _ref_kahan}


@pytest.mark.parametrize("acc", list(DTYPES))
@pytest.mark.parametrize("order", list(REFS))
def test_accumulate_matches_per_step_reference(acc, order):
    rng = np.random.default_rng(hash((acc, order)) % 2**32)
    t = DTYPES[acc]
    with np.errstate(over="ignore", invalid="ignore"):
        for n, data in ((1, rng.random(1)), (7, rng.random(7)), (1000, rng.random(1000)),
                        (1001, rng.normal(size=1001) * 100), (3000, rng.random(3000) * 10)):
            x = P.round_to(data, acc)
            assert P.accumulate(x, acc, order) == REFS[order](x, t), (acc, order, n)
            # values not yet in the format are rounded to it first
            assert P.accumulate(data, acc, order) == REFS[order](x, t)


def test_accumulate_4096_ones():
    ones = np.ones(4096)
    assert P.accumulate(ones, "fp16") == 2048
    assert P.accumulate(ones, "bf16") == 256
    assert P.accumulate(ones, "fp32") == 4096
    assert P.accumulate(ones, "fp16", "pairwise") == 4096
    assert P.accumulate(ones, "fp16", "kahan") == 4096
    assert P.accumulate(ones[:2048], "fp16") == 2048 and P.accumulate(ones[:2049], "fp16") == 2048
    # np.sum hides the effect (pairwise, in float32), np.cumsum shows it
    assert float(np.sum(ones.astype(np.float16))) == 4096
    assert float(np.cumsum(ones.astype(np.float16))[-1]) == 2048


def test_accumulate_edge_cases():
    assert P.accumulate([], "fp16") == 0.0
    assert P.accumulate([3.0], "fp16", "pairwise") == 3.0
    assert P.accumulate([60000, 60000], "fp16") == np.inf
    assert math.isnan(P.accumulate([np.inf, -np.inf], "fp32", "kahan"))
    assert P.accumulate([2.0**24, 1, -2.0**24], "fp32") == 0
    assert P.accumulate([1, -2.0**24, 2.0**24], "fp32") == 1
    assert P.accumulate(np.ones((64, 64)), "fp16") == 2048   # any shape, summed in C order


def _python_lines_run(fn, *args):
    """How many lines of Python ``fn(*args)`` executes (every function it calls included)."""
    lines = 0

    def trace(frame, event, arg):
        nonlocal lines
        lines += event == "line"
        return trace

    sys.settrace(trace)
    try:
        fn(*args)
    finally:
        sys.settrace(None)
    return lines


@pytest.mark.parametrize("order", ["sequential", "pairwise"])
@pytest.mark.parametrize("acc", ["fp16", "bf16", "fp32"])
def test_accumulation_is_vectorised_not_a_python_loop_per_value(acc, order):
    # Why a million values take milliseconds, asserted without a clock: the Python work does not
    # grow with the number of values (sequential: one np.add.accumulate; pairwise: one NumPy
    # addition per tree level, 20 levels for a million against 4 for ten).
    x = np.random.default_rng(0).random(10**6)
    few, many = (_python_lines_run(P.accumulate, x[:n], acc, order) for n in (10, 10**6))
    extra_levels = math.ceil(math.log2(10**6)) - math.ceil(math.log2(10))
    assert many <= few + (5 * extra_levels if order == "pairwise" else 0), (few, many)


@pytest.mark.parametrize("acc", ["fp16", "bf16", "fp32"])
@pytest.mark.parametrize("order", list(REFS))
def test_error_bounds_hold_on_random_data(acc, order):
    rng = np.random.default_rng(7)
    for n in (2, 3, 10, 100, 1000, 4096, 20_000):
        for data in (rng.random(n), rng.normal(size=n), rng.lognormal(0, 2, size=n) / n):
            x = P.round_to(data, acc)
            err = abs(P.accumulate(x, acc, order) - math.fsum(x))
            assert err <= P.error_bound(x, acc, order), (acc, order, n)


def test_error_bound_formulas():
    x = np.ones(1024)
    u = P.unit_roundoff("fp16")
    assert u == 2**-11
    assert P.error_bound(x, "fp16", "sequential") == 1023 * u * 1024
    assert P.error_bound(x, "fp16", "pairwise") == 10 * u * 1024
    assert P.error_bound(x, "fp16", "kahan") == 2 * u * 1024
    assert P.error_bound([5.0], "fp32") == 0.0


def test_summation_errors_table():
    d = P.summation_errors(ns=[4, 64, 4096], accs=("fp16", "fp32"))
    assert list(d["n"]) == [4, 64, 4096]
    for key, err in d["errors"].items():
        assert err.shape == (3,) and np.all(err <= d["bounds"][key])
    # sequential FP16 error grows with n; FP32 Kahan stays near u
    assert d["errors"]["fp16", "sequential"][-1] > 10 * d["errors"]["fp16", "pairwise"][-1]
    assert d["errors"]["fp32", "kahan"].max() <= 2 * d["u"]["fp32"]
    with pytest.raises(ValueError):
        P.summation_errors(ns=[0])


@pytest.mark.parametrize("name", list(P.FORMATS))
def test_scalar_and_array_rounding_agree(name):
    x = _wide_random(np.random.default_rng(8), 3000)
    x = np.concatenate([x, [0.0, -0.0, np.inf, -np.inf, 1e308, -1e-320, 65520, 464, 2**24 + 1]])
    with np.errstate(over="ignore"):
        r = P.round_to(x, name)
    for v, want in zip(x.tolist(), r.tolist(), strict=True):
        got = P.from_bits(P.encode(v, name), name)
        assert got == want or (math.isnan(got) and math.isnan(want))
        assert P.decode(v, name).spacing == P.spacing(want, name) or not math.isfinite(want)
    assert P.round_to(2**70, name) == P.round_to(2.0**70, name) or name == "fp8_e4m3"
    assert P.round_to([2**70, 1], name)[1] == 1
    with pytest.raises(ValueError, match="beyond float64"):
        P.round_to([10**400, 1], name)
