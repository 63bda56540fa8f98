"""Tensor Core GEMM (lesson 12): the NumPy emulation and its numerics everywhere; the WMMA kernel
itself on the gpu backend with CuPy (those tests skip, with the reason, on the simulator).

Run the GPU part with ``GEMMLAB_BACKEND=gpu python -m pytest tests/test_tensorcore.py``
(``benchmarks/gpu_tensorcore.sh`` does).
"""
import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest

import gemmlab as gl
from gemmlab import precision
from gemmlab.tensorcore import emulation, kernel, numerics, probes, records, tiling

tc = gl.tensorcore
GPU_OK, GPU_REASON = tc.available()
needs_gpu = pytest.mark.skipif(not GPU_OK, reason=GPU_REASON)
ODD_SHAPES = [(1, 1, 1), (37, 53, 71), (17, 130, 33), (70, 9, 129)]
FORMATS = {"fp16": np.float16, "bf16": ml_dtypes.bfloat16}


def _inputs(rng, M, N, K, fmt="fp16"):
    dtype = FORMATS[fmt]
    return (rng.standard_normal((M, K)).astype(dtype), rng.standard_normal((K, N)).astype(dtype))


def _reference(A, B, C=None, alpha=1.0, beta=0.0):
    A64, B64 = A.astype(np.float64), B.astype(np.float64)
    ref = alpha * (A64 @ B64)
    scale = abs(alpha) * (np.abs(A64) @ np.abs(B64))
    if C is not None:
        ref = ref + beta * C.astype(np.float64)
        scale = scale + abs(beta) * np.abs(C.astype(np.float64))
    return ref, scale


def _bound(K, acc="fp32"):
    """Accumulation bound plus the epilogue's two FP32 roundings (alpha scaling, beta C)."""
    return numerics.accumulation_bound(K, acc) + 4 * precision.unit_roundoff("fp32")


def _hw_bound(K, acc="fp32"):
    """The same for the hardware, whose steps may truncate every aligned term (see numerics)."""
    return numerics.truncation_bound(K, acc) + 4 * precision.unit_roundoff("fp32")


# ---------------------------------------------------------------------------- tiling

def test_tilings_partition_the_block_tile_among_warps_and_fragments():
    for t in tiling.TILINGS.values():
        assert t.warps_m * t.frags_m * tiling.FRAG == t.block_m
        assert t.warps_n * t.frags_n * tiling.FRAG == t.block_n
        assert t.threads == 32 * t.warps
        assert t.accumulator_registers() * 32 == t.frags_m * t.frags_n * 256
        assert t.smem_bytes <= 227 * 1024      # Hopper's opt-in shared memory per block


def test_a_tiling_that_does_not_split_into_warps_is_refused():
    with pytest.raises(ValueError, match="multiple of warps_m"):
        tiling.Tiling("bad", 48, 32, 32, 2, 2)
    with pytest.raises(ValueError, match="at least 2 buffers"):
        tiling.Tiling("bad", 32, 32, 32, 2, 2, stages=1)
    with pytest.raises(ValueError, match="unknown tiling"):
        tiling.get_tiling("huge")


def test_hierarchy_counts_match_a_brute_force_walk():
    n, tile, frag = 128, 32, 16
    c_tiles = pairs = frags = mmas = 0
    for _ in range(0, n, tile):
        for _ in range(0, n, tile):
            c_tiles += 1
            for k0 in range(0, n, tile):
                pairs += c_tiles == 1
                for _ in range(0, tile, frag):
                    for _ in range(0, tile, frag):
                        frags += c_tiles == 1 and k0 == 0
                        mmas += tile // frag
    h = tiling.hierarchy(n, tile, frag)
    assert (h["c_tiles"], h["tile_pairs_per_c_tile"], h["fragments_per_tile"], h["mma_total"]) == \
           (c_tiles, pairs, frags, mmas)
    assert h["mma_steps_per_tile_pair"] == tile // frag
    with pytest.raises(ValueError):
        tiling.hierarchy(100, 32, 16)


def test_register_arithmetic_of_the_lesson():
    assert tiling.scalars_per_thread() == 3 * 16 * 16 > tiling.MAX_REGISTERS
    assert tiling.elements_per_lane() * 32 == 16 * 16


# ---------------------------------------------------------------------------- one MMA step

def test_mma_rounds_the_exact_sum_once_to_fp32():
    rng = np.random.default_rng()
    a = rng.standard_normal((16, 16)).astype(np.float16)
    b = rng.standard_normal((16, 16)).astype(np.float16)
    c = rng.standard_normal((16, 16)).astype(np.float32)
    d = tc.mma(a, b, c)
    assert d.dtype == np.float32
    for i, j in [(0, 0), (3, 11), (15, 15), (7, 2)]:
        exact = Fraction(float(c[i, j])) + sum(Fraction(float(a[i, k])) * Fraction(float(b[k, j]))
                                               for k in range(16))
        assert abs(Fraction(float(d[i, j])) - exact) <= abs(Fraction(float(np.spacing(d[i, j])))) / 2


def test_mma_rejects_wrong_fragments():
    f16 = np.zeros((16, 16), np.float16)
    with pytest.raises(ValueError, match="16 x 16"):
        tc.mma(np.zeros((16, 8), np.float16), f16, np.zeros((16, 16), np.float32))
    with pytest.raises(TypeError, match="astype"):
        tc.mma(np.zeros((16, 16), np.float32), f16, np.zeros((16, 16), np.float32))


def _fraction_align_truncate(terms, extra_bits, final):
    """Independent exact model: align to the largest term, truncate, add, round once."""
    nonzero = [t for t in terms if t != 0]
    if not nonzero:
        return 0.0
    e_max = max(math.floor(math.log2(abs(t))) for t in nonzero)
    quantum = Fraction(2) ** (e_max - 23 - extra_bits)
    total = sum((Fraction(int(t / quantum)) * quantum for t in terms), Fraction(0))
    if total == 0:
        return 0.0
    e = math.floor(math.log2(abs(total)))
    ulp = Fraction(2) ** (e - 23)
    steps = total / ulp
    n = int(steps) if final == "rz" else round(steps)
    return float(n * ulp)


@pytest.mark.parametrize("model", [numerics.AlignTruncate(16, 0, "rz"),
                                   numerics.AlignTruncate(8, 3, "rn"),
                                   numerics.AlignTruncate(4, 1, "rz")])
def test_align_truncate_model_matches_an_exact_fraction_model(model):
    rng = np.random.default_rng()
    # values spread over many binades, both signs: alignment and truncation really happen
    a = (rng.standard_normal((40, 16)) * 2.0 ** rng.integers(-12, 12, (40, 16))).astype(np.float16)
    b = (rng.standard_normal((40, 16)) * 2.0 ** rng.integers(-12, 12, (40, 16))).astype(np.float16)
    c = (rng.standard_normal(40) * 2.0 ** rng.integers(-6, 20, 40)).astype(np.float32)
    products = a.astype(np.float64) * b.astype(np.float64)
    got = numerics.mma_update(products, c, model)
    for t in range(40):
        acc = Fraction(float(c[t]))
        for g in range(0, 16, model.block):
            terms = [acc] + [Fraction(float(p)) for p in products[t, g:g + model.block]]
            acc = Fraction(_fraction_align_truncate(terms, model.extra_bits, model.final))
        assert float(got[t]) == float(acc), (t, model)


def test_round_toward_zero_never_rounds_up():
    rng = np.random.default_rng()
    x = rng.standard_normal(1000) * 10.0 ** rng.integers(-20, 20, 1000)
    rz = numerics.round_toward_zero_fp32(x).astype(np.float64)
    assert np.all(np.abs(rz) <= np.abs(x))
    outward = np.copysign(np.inf, x).astype(np.float32)
    away = np.nextafter(rz.astype(np.float32), outward).astype(np.float64)
    assert np.all(np.abs(away) > np.abs(x))


def test_bad_model_names_are_refused():
    with pytest.raises(ValueError, match="model must be"):
        numerics.check_model("truncate")
    with pytest.raises(ValueError, match="FP32 accumulator only"):
        numerics.check_model(numerics.AlignTruncate(), acc="fp16")
    with pytest.raises(ValueError, match="block must divide 16"):
        numerics.AlignTruncate(block=3)


# ---------------------------------------------------------------------------- the emulated GEMM

@pytest.mark.parametrize("fmt", ["fp16", "bf16"])
@pytest.mark.parametrize("shape", ODD_SHAPES)
def test_emulation_matches_float64_within_the_fp32_bound(shape, fmt):
    rng = np.random.default_rng()
    M, N, K = shape
    A, B = _inputs(rng, M, N, K, fmt)
    C = rng.standard_normal((M, N)).astype(np.float32)
    got = tc.emulate(A, B, C, alpha=1.5, beta=-0.5)
    ref, scale = _reference(A, B, C, 1.5, -0.5)
    assert got.dtype == np.float32 and got.shape == (M, N)
    assert np.max(np.abs(got - ref) / scale) <= _bound(K)


def test_emulation_with_an_fp16_accumulator_stays_within_the_fp16_bound():
    rng = np.random.default_rng()
    A, B = _inputs(rng, 33, 21, 100)
    ref, scale = _reference(A, B)
    got = tc.emulate(A, B, acc="fp16")
    err = np.max(np.abs(got - ref) / scale)
    assert err <= _bound(100, "fp16")
    assert err > _bound(100, "fp32")      # and visibly worse than FP32 accumulation


@pytest.mark.parametrize("model", ["rn", numerics.AlignTruncate(8, 2, "rz")])
def test_tiled_emulation_equals_the_step_emulation_bit_for_bit(model):
    rng = np.random.default_rng()
    A, B = _inputs(rng, 45, 70, 90)
    for name in ("lesson", "fast"):
        assert np.array_equal(tc.emulate(A, B, tiling=name, model=model),
                              tc.emulate_steps(A, B, model=model))
    assert np.array_equal(tc.emulate(A, B, acc="fp16"), tc.emulate_steps(A, B, acc="fp16"))


def test_emulation_stats_show_the_pipeline_structure():
    rng = np.random.default_rng()
    M, N, K = 40, 56, 72
    A, B = _inputs(rng, M, N, K)
    t = tiling.LESSON
    _, st = tc.emulate(A, B, tiling=t, stats=True)
    blocks = math.ceil(M / t.block_m) * math.ceil(N / t.block_n)
    k_tiles = math.ceil(K / t.block_k)
    assert st.blocks == blocks
    assert st.smem_tiles == blocks * k_tiles
    # every 16x16 fragment of every block gets one MMA per 16-wide K step
    assert st.mma_steps == blocks * (t.block_m // 16) * (t.block_n // 16) * k_tiles * t.k_steps
    assert st.c_writes == M * N                           # each output written exactly once


def test_ownership_gives_each_warp_its_own_fragments():
    t = tiling.FAST
    warp, frag = emulation.ownership(t.block_m, t.block_n, t)
    assert sorted(np.unique(warp)) == list(range(t.warps))
    for w in range(t.warps):
        assert np.sum(warp == w) == t.warp_m * t.warp_n
        assert len(np.unique(frag[warp == w])) == t.frags_m * t.frags_n


@pytest.mark.parametrize("call, error, words", [
    (lambda A, B: tc.emulate(A.astype(np.float32), B), TypeError, "astype"),
    (lambda A, B: tc.emulate(A, B.astype(ml_dtypes.bfloat16)), TypeError, "same format"),
    (lambda A, B: tc.emulate(A, B[:-1]), ValueError, "inner dimensions"),
    (lambda A, B: tc.emulate(A, B, np.zeros((2, 2), np.float32), beta=1.0), ValueError, "shape"),
    (lambda A, B: tc.emulate(A, B, beta=1.0), ValueError, "no C was given"),
    (lambda A, B: tc.gemm(A, B, engine="tpu"), ValueError, "engine must be"),
])
def test_bad_inputs_get_a_message_that_says_what_to_do(call, error, words):
    A = np.ones((4, 5), np.float16)
    B = np.ones((5, 3), np.float16)
    with pytest.raises(error, match=words):
        call(A, B)


def test_gl_gemm_reaches_the_tensor_core_gemm():
    rng = np.random.default_rng()
    A, B = _inputs(rng, 21, 34, 50)
    C = rng.standard_normal((21, 34)).astype(np.float32)
    assert np.array_equal(gl.gemm(A, B, C, 2.0, 0.5, kernel="wmma"), tc.gemm(A, B, C, 2.0, 0.5))
    with pytest.raises(TypeError, match="astype"):
        gl.gemm(A.astype(np.float32), B.astype(np.float32), kernel="wmma")


# ---------------------------------------------------------------------------- numerics

def test_block_of_one_reproduces_the_lesson_01_fp16_stall():
    ones = np.ones(4096)
    assert numerics.ones_sum(4096, "fp16", block=1) == precision.accumulate(ones, "fp16")
    assert numerics.ones_stall("fp16", block=1) == precision.accumulate(ones, "fp16")


def test_blocks_of_sixteen_move_the_fp16_stall():
    stall = numerics.ones_stall("fp16", block=16)
    acc = np.float16(0)                       # independent: round to FP16 after each block sum
    for _ in range(2 * int(stall) // 16):
        acc = np.float16(np.float64(acc) + 16.0)
    assert numerics.ones_sum(2 * int(stall), "fp16") == float(acc) == stall


def test_error_vs_k_fp32_accumulation_stays_under_its_bound():
    ks = [16, 256, 2048]
    res = numerics.error_vs_k(ks, "positive", trials=16)
    for K, err32, err16 in zip(ks, res["fp16_fp32acc"], res["fp16_fp16acc"], strict=True):
        assert err32 <= numerics.accumulation_bound(K, "fp32")
        assert err16 <= numerics.accumulation_bound(K, "fp16")
        assert err16 > 100 * err32
    # BF16 keeps 8 significant bits, FP16 11: its input rounding is several times larger
    assert min(r / f for r, f in zip(res["bf16_input"], res["fp16_input"], strict=True)) > 2


def test_truncation_bound_covers_the_align_truncate_models():
    rng = np.random.default_rng()
    K = 400
    a = rng.uniform(0, 1, (64, K))
    b = rng.uniform(0, 1, (64, K))
    ar, br = numerics.round_inputs(a, "fp16"), numerics.round_inputs(b, "fp16")
    ref = np.einsum("tk,tk->t", ar, br)
    for model in (numerics.AlignTruncate(16, 0, "rz"), numerics.AlignTruncate(4, 0, "rz")):
        err = np.abs(numerics.blocked_dot(ar, br, model=model) - ref) / ref
        assert err.max() <= numerics.truncation_bound(K)
        assert numerics.truncation_bound(K) > numerics.accumulation_bound(K)


def test_error_vs_k_rejects_bad_k():
    with pytest.raises(ValueError, match="positive whole number"):
        numerics.error_vs_k([16, 0])
    with pytest.raises(ValueError, match="unknown input kind"):
        numerics.error_vs_k([16], "zeros")


# ---------------------------------------------------------------------------- probes

def test_probe_values_are_exact_and_read_back_from_the_diagonal():
    A, B = probes.probe_matrices()
    D = tc.emulate_steps(A, B)
    measured = probes.read_results(D)
    for p in probes.PROBES:
        assert measured[p.name] == probes.predict(p, "rn"), p.name


def test_emulation_reproduces_each_models_probe_predictions():
    A, B = probes.probe_matrices()
    for model in (numerics.AlignTruncate(16, 0, "rz"), numerics.AlignTruncate(4, 3, "rn")):
        measured = probes.read_results(tc.emulate(A, B, tiling="fast", model=model))
        matches, _ = probes.matching_models(measured)
        assert model in matches


def test_probes_tell_the_candidate_models_apart():
    table = probes.predictions()
    signatures = {tuple(v.values()) for v in table.values()}
    assert len(signatures) >= len(table) // 2       # most candidates differ on some probe
    exact = table["rn"]
    assert exact["align_then_cancel"] == 1.0
    assert table[str(numerics.AlignTruncate(16, 0, "rz"))]["align_then_cancel"] == 0.0


# ---------------------------------------------------------------------------- records, source

def test_records_missing_and_present(tmp_path):
    assert gl.measure.recorded(tmp_path / "none.json", records.SECTIONS) is None
    path = tmp_path / "r.json"
    path.write_text('{"machine": {"gpu": "X", "driver": "1", "date": "d"}, "performance": '
                    '[{"n": 8, "kernel": "a", "tflops": 1.0}, {"n": 8, "kernel": "b", "tflops": 2.0}]}')
    rec = gl.measure.recorded(path, records.SECTIONS)
    assert "X" in records.label(rec) and "driver 1" in records.label(rec)
    assert [r["kernel"] for r in records.performance_rows(rec, 8)] == ["b", "a"]
    path.write_text('{"something": 1}')
    with pytest.raises(ValueError, match="no 'machine', 'performance' section"):
        gl.measure.recorded(path, records.SECTIONS)


def test_the_recorded_h200_run_is_a_tensor_core_record():
    record = gl.measure.recorded(records.RECORD_NAME, records.SECTIONS)
    assert record is not None and "H200" in records.label(record)


def test_kernel_source_carries_the_tiling():
    t = tiling.FAST
    src = kernel.kernel_source(t, "bf16")
    name = kernel.kernel_name(t, "bf16")
    assert f"void __launch_bounds__({t.threads}, {t.min_blocks_per_sm})\n{name}(" in src
    assert f"{t.block_m}, {t.block_n}, {t.block_k}, {t.warps_m}, {t.warps_n}" in src
    with pytest.raises(ValueError, match="FP16 accumulator"):
        kernel.kernel_name(t, "bf16", "fp16")


def test_without_a_gpu_the_kernel_says_why(monkeypatch):
    if GPU_OK:
        pytest.skip("a GPU is available here")
    ok, reason = tc.available()
    assert not ok and reason
    assert tc.engine() == ("emulation", reason)
    with pytest.raises(RuntimeError, match="cannot run"):
        tc.gemm_gpu(np.ones((2, 2), np.float16), np.ones((2, 2), np.float16))
    monkeypatch.setattr(kernel.device, "backend", lambda: "gpu")
    monkeypatch.setattr(kernel.importlib.util, "find_spec", lambda name: None)
    assert "CuPy is not installed" in kernel.available()[1]


# ---------------------------------------------------------------------------- the real kernel

@needs_gpu
@pytest.mark.parametrize("name", list(tiling.TILINGS))
@pytest.mark.parametrize("shape", ODD_SHAPES + [(200, 136, 88), (129, 257, 300)])
def test_gpu_kernel_matches_float64_at_odd_shapes(name, shape):
    rng = np.random.default_rng()
    M, N, K = shape
    A, B = _inputs(rng, M, N, K)
    C = rng.standard_normal((M, N)).astype(np.float32)
    got = tc.gemm_gpu(A, B, C, 1.5, -0.5, tiling=name)
    ref, scale = _reference(A, B, C, 1.5, -0.5)
    assert not np.isnan(got).any()                       # the output was poisoned with NaN
    assert np.max(np.abs(got - ref) / scale) <= _hw_bound(K)


@needs_gpu
@pytest.mark.parametrize("name", ["lesson", "fast"])
def test_gpu_bf16_and_fp16_accumulator_variants(name):
    rng = np.random.default_rng()
    A, B = _inputs(rng, 67, 45, 203, "bf16")
    ref, scale = _reference(A, B)
    assert np.max(np.abs(tc.gemm_gpu(A, B, tiling=name) - ref) / scale) <= _hw_bound(203)
    A, B = _inputs(rng, 67, 45, 203)
    ref, scale = _reference(A, B)
    if name == "lesson":
        got = tc.gemm_gpu(A, B, tiling=name, acc="fp16")
        assert np.max(np.abs(got - ref) / scale) <= _hw_bound(203, "fp16")


@needs_gpu
def test_gpu_kernel_equals_the_emulation_to_fp32_rounding():
    rng = np.random.default_rng()
    M, N, K = 96, 160, 1000
    A, B = _inputs(rng, M, N, K)
    gpu = tc.gemm_gpu(A, B)
    emu = tc.emulate_steps(A, B)
    _, scale = _reference(A, B)
    # each of the K/16 steps may round differently (the hardware truncates while aligning): the
    # two results lie within the hardware bound plus the emulation's bound of each other
    tolerance = numerics.truncation_bound(K) + numerics.accumulation_bound(K)
    assert np.all(np.abs(gpu - emu) <= tolerance * scale)
    print(f"bitwise equal: {np.mean(gpu == emu):.4f} of {gpu.size} elements")


@needs_gpu
def test_gpu_tilings_agree_bit_for_bit_on_the_probes():
    A, B = probes.probe_matrices()
    results = [probes.read_results(tc.gemm_gpu(A, B, tiling=name)) for name in tiling.TILINGS]
    assert all(r == results[0] for r in results)
    assert results[0]["product_exact"] == probes.predict(probes.PROBES[0], "rn")


@needs_gpu
def test_gpu_takes_cupy_arrays_and_bf16_bit_patterns():
    import cupy
    rng = np.random.default_rng()
    A, B = _inputs(rng, 50, 70, 90)
    got = kernel.gemm_gpu(cupy.asarray(A), cupy.asarray(B)[:, 3:])      # a strided view of B
    assert isinstance(got, cupy.ndarray)
    assert np.array_equal(cupy.asnumpy(got), tc.gemm_gpu(A, np.ascontiguousarray(B[:, 3:])))
    A, B = _inputs(rng, 50, 70, 90, "bf16")
    bits = kernel.prepare(cupy.asarray(A.view(np.uint16)), cupy.asarray(B.view(np.uint16)),
                          bits_as="bf16")
    bits.launch()
    assert np.array_equal(cupy.asnumpy(bits.C_out), tc.gemm_gpu(A, B))


@needs_gpu
def test_gpu_empty_k_gives_beta_c():
    C = np.arange(6, dtype=np.float32).reshape(2, 3)
    got = tc.gemm_gpu(np.zeros((2, 0), np.float16), np.zeros((0, 3), np.float16), C, 2.0, 0.5)
    assert np.array_equal(got, np.float32(0.5) * C)


@needs_gpu
def test_gpu_rejects_fp32_inputs():
    with pytest.raises(TypeError, match="astype"):
        tc.gemm_gpu(np.ones((2, 2), np.float32), np.ones((2, 2), np.float32))
