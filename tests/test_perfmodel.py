"""Performance models against brute-force counts and independent references."""
import math

import numpy as np
import pytest

import gemmlab as gl

pm = gl.perfmodel
rng = np.random.default_rng()


# ---- hardware table ----

def test_every_figure_has_a_source_and_says_how_it_was_obtained():
    for c in pm.HARDWARE.values():
        for fig in [*c.peaks.values(), c.bandwidth, c.capacity]:
            if fig is None:                       # not confirmed: shown as '?', never guessed
                continue
            assert fig.source and fig.basis in (pm.DATASHEET, pm.SPARSE_HALVED, pm.DERIVED)
            assert fig.value > 0 and not fig.is_measured
            assert fig.basis != pm.DERIVED or fig.note     # a derived figure says how


def test_tensor_core_peaks_printed_with_sparsity_are_halved_and_marked():
    h200 = pm.chip("H200 SXM")
    assert h200.peaks["fp16"].basis == pm.SPARSE_HALVED
    assert h200.peak("fp16") == pytest.approx(1979e12 / 2)
    assert h200.peaks["fp32"].basis == pm.DATASHEET
    assert any("*" in row["fp16 TFLOP/s"] for row in pm.table())


def test_ridge_point_is_peak_over_bandwidth_and_lookup_is_forgiving():
    for name in ("h200", "H200 SXM", "H100", "a100 sxm"):
        c = pm.chip(name)
        assert c.ridge_point("fp32") == pytest.approx(c.peak("fp32") / c.bandwidth.value)
        assert pm.ridge_point(c.peak(), c.bandwidth.value) == pytest.approx(c.ridge_point())


def test_bad_hardware_queries_explain_themselves():
    with pytest.raises(ValueError, match="H200 SXM"):
        pm.chip("V100")
    with pytest.raises(ValueError, match="no fp8"):
        pm.chip("A100").peak("fp8")
    with pytest.raises(ValueError, match="unknown data type"):
        pm.chip("H200").peak("fp4")


# ---- FLOP and traffic counts ----

def _count_naive_ops(M, N, K):
    """Count the multiplications and additions of sum_k A[i,k] B[k,j] written without the 0 + ..."""
    ops = 0
    for _ in range(M * N):
        ops += 1                      # first product
        for _ in range(1, K):
            ops += 2                  # product and addition
    return ops


@pytest.mark.parametrize("trial", range(3))
def test_flop_counts_match_an_explicit_count(trial):
    M, N, K = (int(v) for v in rng.integers(1, 12, size=3))
    assert pm.gemm_flops_exact(M, N, K) == _count_naive_ops(M, N, K)
    assert pm.gemm_flops(M, N, K) - pm.gemm_flops_exact(M, N, K) == M * N


def _count_tiled_loads(M, N, K, T):
    """Elements brought in by the tiled schedule, tile by tile, plus one write per output."""
    loaded = 0
    for i0 in range(0, M, T):
        for j0 in range(0, N, T):
            for k0 in range(0, K, T):
                rows, cols, depth = min(T, M - i0), min(T, N - j0), min(T, K - k0)
                loaded += rows * depth + depth * cols
    return loaded + M * N


@pytest.mark.parametrize("trial", range(4))
def test_tiled_traffic_matches_a_tile_by_tile_count_on_odd_shapes(trial):
    M, N, K = (int(v) for v in rng.integers(5, 70, size=3) | 1)
    T = int(rng.integers(2, 20))
    itemsize = int(rng.choice([2, 4, 8]))
    assert pm.gemm_traffic(M, N, K, "tiled", itemsize, tile=T) == _count_tiled_loads(M, N, K, T) * itemsize


def test_ideal_and_no_reuse_are_the_tiled_model_at_its_extremes():
    M, N, K = (int(v) for v in rng.integers(3, 50, size=3))
    assert pm.gemm_traffic(M, N, K, "ideal") == pm.gemm_traffic(M, N, K, "tiled", tile=max(M, N))
    assert pm.gemm_traffic(M, N, K, "no_reuse") == pm.gemm_traffic(M, N, K, "tiled", tile=1)
    assert pm.gemm_traffic(M, N, K, "ideal") == pm.gemm_storage_bytes(M, N, K)


def test_bad_traffic_arguments_are_rejected():
    with pytest.raises(ValueError, match="needs a tile size"):
        pm.gemm_traffic(8, 8, 8, "tiled")
    with pytest.raises(ValueError, match="unknown traffic model"):
        pm.gemm_traffic(8, 8, 8, "cached")
    with pytest.raises(ValueError, match="only applies"):
        pm.gemm_traffic(8, 8, 8, "ideal", tile=4)
    with pytest.raises(ValueError, match="M must be a whole number"):
        pm.gemm_flops(0, 8, 8)
    with pytest.raises(ValueError, match="N must be a whole number"):
        pm.gemm_flops(8, 2.5, 8)


def test_workspace_grows_with_the_square_of_the_tile():
    T = int(rng.integers(1, 200))
    assert pm.tile_workspace_bytes(2 * T) == 4 * pm.tile_workspace_bytes(T) == 4 * 3 * T * T * 4


def test_linear_intensity_rises_with_M_towards_the_weight_bound():
    K, N = (int(v) for v in rng.integers(64, 4096, size=2))
    values = [pm.linear_intensity(M, K, N) for M in (1, 2, 8, 64, 512, 4096)]
    assert all(a < b for a, b in zip(values, values[1:], strict=False))
    # one row: every weight is used once (2 FLOPs per 4-byte weight, plus the vectors)
    assert values[0] == pytest.approx(2 * K * N / (4 * (K + K * N + N)))


def test_fusion_and_element_wise_counts():
    n = int(rng.integers(1, 10**9))
    f = pm.fusion_traffic(n)
    assert f["unfused_bytes"] / f["fused_bytes"] == pytest.approx(1.5)
    assert f["flops"] == 2 * n
    assert pm.vector_add_counts(n, 2) == (n, 6 * n)
    assert pm.attention_scores_bytes(3, 5, 2) == 3 * 25 * 2


# ---- roofline ----

def test_roofline_time_is_the_slower_of_the_two_bounds():
    F, Q, P, B = (float(v) for v in rng.uniform(1, 1e3, size=4))
    t = pm.roofline_time(F, Q, P, B)
    assert t == max(F / P, Q / B)
    assert pm.limiting_resource(F, Q, P, B) == ("compute" if F / P >= Q / B else "bandwidth")
    assert F / t == pytest.approx(pm.attainable_flops(F / Q, P, B))


def test_attainable_flops_bends_at_the_ridge_point():
    P, B = float(rng.uniform(1e12, 1e14)), float(rng.uniform(1e11, 1e13))
    ridge = pm.ridge_point(P, B)
    I = np.array([ridge / 4, ridge, 4 * ridge])
    np.testing.assert_allclose(pm.attainable_flops(I, P, B), [B * ridge / 4, P, P])
    with pytest.raises(ValueError, match="intensity"):
        pm.attainable_flops(-1.0, P, B)
    with pytest.raises(ValueError, match="nbytes must be > 0"):
        pm.intensity(1.0, 0)


# ---- parallel time ----

@pytest.mark.parametrize("trial", range(3))
def test_group_sum_timeline_ends_at_the_model_time(trial):
    n = int(rng.integers(2, 7))
    work = rng.integers(1, 20, size=n)
    rates = rng.uniform(0.5, 2, size=n)
    comm = float(rng.uniform(0, 5))
    bars = pm.group_sum_timeline(work, rates, comm)
    expected = max(work / rates) + n * comm + (n - 1)
    assert pm.group_sum_time(work, rates, comm) == pytest.approx(expected)
    assert max(b.end for b in bars) == pytest.approx(expected)
    assert sum(b.kind == "send" for b in bars) == n and sum(b.kind == "merge" for b in bars) == n - 1


def test_one_worker_needs_no_report():
    W = int(rng.integers(1, 100))
    assert pm.group_sum_time([W], rates=2.0, comm=7) == W / 2
    with pytest.raises(ValueError, match="one per worker"):
        pm.group_sum_time([1, 2, 3], rates=[1, 2])


def test_self_schedule_hands_each_chunk_to_the_first_idle_worker():
    n, chunk = int(rng.integers(5, 60)), int(rng.integers(1, 7))
    rates = rng.uniform(0.3, 2.0, size=int(rng.integers(2, 6)))
    cost = float(rng.uniform(0, 1))
    res = pm.self_schedule(n, chunk, rates, cost)
    assert sum(res["work"]) == n and res["time"] == max(res["finish"])
    busy_until = {}
    for bar in res["bars"]:                      # replay: each chunk starts when the first worker frees up
        assert bar.start == pytest.approx(min(busy_until.get(name, 0.0) for name in "ABCDE"[:len(rates)]))
        assert bar.start == pytest.approx(busy_until.get(bar.lane, 0.0))
        w = "ABCDE".index(bar.lane)
        assert bar.end - bar.start == pytest.approx(cost + int(bar.label) / rates[w])
        busy_until[bar.lane] = bar.end


def test_self_schedule_small_case_by_hand():
    # speeds 2 and 1, five single items: A ends at 0.5, 1.0, 1.5 and B at 1.0, 2.0 (ties go to A)
    res = pm.self_schedule(5, 1, [2, 1])
    assert res["work"] == [3, 2] and res["time"] == 2.0
    with pytest.raises(ValueError, match="one speed per worker"):
        pm.self_schedule(5, 1, 2.0)


def _check_schedule(n, p, result):
    done_level = {}
    for r, adds in enumerate(result["schedule"]):
        assert 1 <= len(adds) <= p
        for level, _ in adds:
            if level > 0:
                assert done_level[level - 1] < r, "an addition ran before its inputs were ready"
            done_level[level] = r
    assert sum(len(a) for a in result["schedule"]) == n - 1


@pytest.mark.parametrize("trial", range(6))
def test_reduction_schedule_is_valid_and_respects_its_bounds(trial):
    n, p = int(rng.integers(2, 200)), int(rng.integers(1, 40))
    res = pm.reduction_schedule(n, p)
    _check_schedule(n, p, res)
    assert res["work"] == n - 1 and res["span"] == math.ceil(math.log2(n))
    assert res["rounds"] >= res["lower_bound"] == max((n - 1) / p, res["span"])
    assert pm.reduction_schedule(n, n)["rounds"] == res["span"]   # enough processors: span-bound
    assert pm.reduction_schedule(n, 1)["rounds"] == n - 1          # one processor: work-bound


def test_message_time_pays_latency_per_message():
    Q, L, beta = float(rng.uniform(1e3, 1e9)), float(rng.uniform(1e-6, 1e-4)), float(rng.uniform(1e9, 1e11))
    m = int(rng.integers(2, 5000))
    assert pm.message_time(Q, L, beta, messages=m) - pm.message_time(Q, L, beta) == pytest.approx((m - 1) * L)


def test_amdahl_matches_the_time_decomposition():
    stages = rng.uniform(1, 100, size=3)           # prepare, GEMM, post-process
    p, extra = float(rng.uniform(1.5, 50)), float(rng.uniform(0, 20))
    before, after = stages.sum(), stages[0] + stages[1] / p + stages[2] + extra
    s = (stages[0] + stages[2]) / before
    assert pm.amdahl(s, p, overhead=extra / before) == pytest.approx(pm.speedup(before, after))
    assert pm.amdahl(s, math.inf) == pytest.approx(1 / s)
    assert pm.efficiency(before, after, 4) == pytest.approx(before / after / 4)
    with pytest.raises(ValueError, match="fraction"):
        pm.amdahl(1.5, 2)


@pytest.mark.parametrize("trial", range(4))
def test_pipeline_matches_the_closed_forms_and_never_overlaps_a_unit(trial):
    n = int(rng.integers(1, 12))
    L, C = (float(v) for v in rng.uniform(0.5, 10, size=2))
    assert pm.pipeline_time(n, L, C, 1) == pytest.approx(n * (L + C))
    assert pm.pipeline_time(n, L, C, 2) == pytest.approx(L + (n - 1) * max(L, C) + C)
    bars = pm.pipeline_schedule(n, L, C, 2)
    for lane in ("load", "compute"):
        mine = [b for b in bars if b.lane == lane]
        assert all(a.end <= b.start + 1e-12 for a, b in zip(mine, mine[1:], strict=False))
    loads = [b for b in bars if b.lane == "load"]
    comps = [b for b in bars if b.lane == "compute"]
    assert all(c.start >= l.end - 1e-12 for l, c in zip(loads, comps, strict=True))


# ---- LRU cache ----

def _reference_lru(lines_touched, n_lines):
    cache, hits = [], 0
    for line in lines_touched:
        if line in cache:
            hits += 1
            cache.remove(line)
        elif len(cache) == n_lines:
            cache.pop(0)
        cache.append(line)
    return hits


@pytest.mark.parametrize("trial", range(4))
def test_lru_simulator_matches_a_list_based_reference(trial):
    line, n_lines = int(rng.choice([1, 4, 16, 64])), int(rng.integers(1, 9))
    trace = rng.integers(0, 40 * line, size=300)
    res = pm.simulate(trace, line, n_lines)
    hits = _reference_lru([int(a) // line for a in trace], n_lines)
    assert (res.hits, res.misses, res.bytes_moved) == (hits, 300 - hits, (300 - hits) * line)
    assert all(len(s.resident) <= n_lines for s in res.steps)


def test_an_access_that_straddles_two_lines_touches_both():
    res = pm.simulate([6], line_size=4, n_lines=4, access_size=4)
    assert [s.line for s in res.steps] == [1, 2] and res.bytes_moved == 8
    with pytest.raises(ValueError, match="address"):
        pm.simulate([-4], 4, 2)


def test_gemm_traces_touch_every_element_the_loop_order_says():
    M, N, K = (int(v) for v in rng.integers(2, 9, size=3))
    for order, tile in (("ijk", None), ("ikj", None), ("tiled", 3)):
        trace = pm.gemm_trace(M, N, K, order, tile=tile)
        assert set(trace.tolist()) == set(range(0, (M * K + K * N + M * N) * 4, 4))
    assert len(pm.gemm_trace(M, N, K, "ijk")) == 2 * M * N * K + M * N
    assert len(pm.gemm_trace(M, N, K, "ikj")) == M * K + 2 * M * N * K
    with pytest.raises(ValueError, match="tile size"):
        pm.gemm_trace(4, 4, 4, "tiled")


def test_a_small_cache_favours_the_reordered_loop():
    n = 24
    small = dict(line_size=32, n_lines=16)
    ijk = pm.simulate(pm.gemm_trace(n, n, n, "ijk"), record=False, **small)
    ikj = pm.simulate(pm.gemm_trace(n, n, n, "ikj"), record=False, **small)
    assert ikj.misses < ijk.misses / 2


# --- occupancy: blocks per SM from registers, threads and shared memory -----------------------

def test_registers_bind_the_ladder_kernels_on_hopper():
    # 256 threads: 128 registers fill exactly half of the 65536-entry register file ...
    assert pm.blocks_per_sm(128, 256, 16640) == (2, "registers")
    # ... one more register per thread (rounded up to 8 per thread by the per-warp unit of 256)
    # leaves room for one block only.
    assert pm.blocks_per_sm(129, 256, 16640) == (1, "registers")
    assert pm.blocks_per_sm(136, 256, 16640) == (1, "registers")


def test_other_limits_of_an_sm():
    # 32 registers x 1024 threads = 32768: registers allow 2 blocks, and so do threads (2048/SM).
    blocks, _ = pm.blocks_per_sm(32, 1024, 0)
    assert blocks == 2
    # Tiny blocks hit the 32-blocks-per-SM cap; 64 KB of shared memory per block allows 3 in 227 KB.
    assert pm.blocks_per_sm(16, 32, 0) == (32, "blocks")
    assert pm.blocks_per_sm(16, 64, 64 * 1024) == (3, "shared memory")


def test_blocks_per_sm_rejects_nonsense():
    with pytest.raises(ValueError, match="threads >= 1"):
        pm.blocks_per_sm(32, 0, 0)


def test_every_chip_says_how_many_sms_it_has():
    for chip in pm.HARDWARE.values():
        assert chip.sms.unit == "SMs" and chip.sms.value > 0 and chip.sms.source
    assert pm.chip("H200").sms.is_measured


def test_fp32_lanes_per_sm_by_compute_capability():
    assert pm.fp32_lanes_per_sm(9, 0) == pm.HOPPER.fp32_lanes == 128
    assert pm.fp32_lanes_per_sm(8, 0) == 64          # A100: 64 FP32 lanes per SM
    assert pm.fp32_lanes_per_sm(8, 6) == pm.fp32_lanes_per_sm(8, 9) == 128
    assert pm.fp32_lanes_per_sm(7, 5) == 64


def test_block_limits_live_with_the_hardware_facts():
    from gemmlab.kernels import _common
    from gemmlab.perfmodel import hardware
    assert (pm.MAX_THREADS_PER_BLOCK, pm.MAX_STATIC_SHARED_BYTES) == (1024, 48 * 1024)
    # the kernels' plans check against the same objects, not copies
    assert _common.MAX_THREADS_PER_BLOCK is hardware.MAX_THREADS_PER_BLOCK
    assert pm.HOPPER is hardware.HOPPER
