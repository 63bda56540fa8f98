"""Lesson 04's questions: the figures the lesson works out, written here by hand, pass. Every
reference, known wrong answer and unanswered question of the bank is checked once, in
test_grading_bank.py."""
import numpy as np
import pytest

from gemmlab.grading import PASS, judge
from gemmlab.grading.bank import get_question, lesson_questions
from gemmlab.judging import evaluate

EXPECTED = {  # the seed's figures, written out: a drift in a reference shows here
    "04.rate_tflops": 1,
    "04.vector_add_intensity": 1 / 12,
    "04.vector_add_time_ms": 0.25,
    "04.vector_add_tflops": 0.4,
    "04.double_peak_time_ms": 0.25,
    "04.double_bandwidth_time_ms": 0.125,
    "04.gemm_gflop": 2.147,
    "04.gemm_storage_mib": 12,
    "04.no_reuse_traffic_gb": 8.594,
    "04.gemm_ideal_time_us": 32.05,
    "04.gemm_no_reuse_time_ms": 1.790,
    "04.gemm_ideal_intensity": 170.7,
    "04.ridge_point": 13.96,
    "04.measured_fraction_of_roof": 0.4,
    "04.reported_bandwidth_tbs": 9.6,
    "04.report_is_consistent": False,
    "04.lru_two_lines_bytes": 24,
    "04.lru_three_lines_bytes": 12,
    "04.reorder_changes_k_order": False,
    "04.tile_loads": 32,
    "04.largest_tile_in_budget": 64,
    "04.smallest_tile_over_ridge": 64,
    "04.fused_traffic_gb": 1.6,
    "04.fusion_speedup_bound": 1.5,
    "04.fusion_guaranteed": False,
    "04.linear_intensity_m128": 60.24,
    "04.smallest_m_over_ridge": 29,
    "04.attention_scores_gib": 4,
    "04.pipeline_single_ms": 28,
    "04.pipeline_double_ms": 22,
    "04.pipeline_dependent": "c",
    "04.pure_add_bound_us": 2.99,               # 1e8 adds at half the FMA-counted 67 TFLOP/s
    "04.source_loads_traffic": "b",
    "04.same_flops_faster": "c",
    "04.compute_bound_traffic": False,
    "04.below_slope_fix": "a",
    "04.report_check_first": "b",
    "04.ridge_guarantee": False,
    "04.cpu_table_proves": "c",
    "04.cpu_followup": "a",
    "04.tiling_flops": False,
    "04.unfused_time_ms": 0.5,
    "04.fused_intensity": 1 / 8,
    "04.fp16_inputs_same": False,
    "04.m_rows_meaning": "b",
    "04.batching_latency": False,
    "04.tiling_vs_recompute": "a",
    "04.flash_flops": False,
    "04.memory_bound_meaning": "b",
    "04.intensity_level": "a",
    "04.busy_sms": 4,                           # (256/128)^2 tiles, one block and one SM each
    "04.hgx_platform_hbm_gb": 8 * 141,
    "04.ikj_keeps_c_in_registers": False,
    "04.fusion_keeps_u": "c",
    "04.tiled_softmax": "a",
    "04.tc_ridge_h100": 295.4,                  # 989.5 TFLOP/s / 3.35 TB/s
    "04.tc_smallest_m": 230,                    # M* = 4096 r / (4096 - 2r) = 229.2, r = 206.1
    "04.decode_compute_bound": False,
    "04.longer_arrays_intensity": False,
    "04.time_tells_cause": False,
    "04.tiling_starts_without_reuse": False,
}


def test_every_question_is_covered_here_and_the_required_ones_exist():
    ids = set(lesson_questions(4))
    assert ids == set(EXPECTED) | {"04.tile_output", "04.roofline_function"}
    assert {"04.vector_add_intensity", "04.ridge_point"} <= ids


@pytest.mark.parametrize("qid", sorted(EXPECTED))
def test_lesson_figure_passes(qid):
    r = judge(qid, EXPECTED[qid])
    assert r.status == PASS, r.feedback


def test_tile_block_reference_is_the_block_of_the_full_product():
    A, B = np.arange(1, 33).reshape(4, 8), np.arange(1, 33).reshape(8, 4)
    block = sum(A[:2, k:k + 2] @ B[k:k + 2, :2] for k in range(0, 8, 2))
    np.testing.assert_array_equal(evaluate(get_question("04.tile_output").answer), block)


def test_roofline_reference_is_the_larger_bound_on_random_values():
    rng = np.random.default_rng()
    F, Q, P, B = (float(v) for v in rng.uniform(1, 1e6, size=4))
    assert get_question("04.roofline_function").answer(F, Q, P, B) == max(F / P, Q / B)


@pytest.mark.parametrize("qid,wrong,words", [
    ("04.tc_ridge_h100", 20.0, "FP32 CUDA-core ridge"),
    ("04.tc_ridge_h100", 590.7, "2:4 sparsity"),
    ("04.tc_smallest_m", 29, "FP32 CUDA-core ridge"),
    ("04.tc_smallest_m", 517, "FP16 elements are 2 bytes"),
    ("04.tc_smallest_m", 207, "only the weights"),
    ("04.decode_compute_bound", True, "decode is memory-bound"),
    ("04.longer_arrays_intensity", True, "stays at 1/12 FLOP/B"),
    ("04.time_tells_cause", True, "the same time fits both causes"),
    ("04.tiling_starts_without_reuse", True, "already reuses"),
])
def test_tensor_core_roofline_misconceptions_are_named(qid, wrong, words):
    r = judge(qid, wrong)
    assert r.status != PASS and words in r.feedback, r.feedback
