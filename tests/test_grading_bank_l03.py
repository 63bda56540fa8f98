"""Lesson 03's questions: the figures the lesson works out, written here by hand, pass. Every
reference, known wrong answer and unanswered question of the bank is checked once, in
test_grading_bank.py."""
import numpy as np
import pytest

from gemmlab.grading import PASS, judge
from gemmlab.grading.bank import get_question, lesson_questions

EXPECTED = {  # the seed's figures (and this lesson's choices for round 1), written out
    "03.round1_time": 11 + 4 * 2 + 3,
    "03.round2_time": 8 + 4 * 2 + 3,
    "03.round2_time_c6": 8 + 4 * 6 + 3,
    "03.split_beats_baseline_c6": False,
    "03.gap_is_all_communication": False,
    "03.rounds_4_processors": 5,
    "03.rounds_8_processors": 4,
    "03.rounds_16_processors": 4,
    "03.shared_output_race": "a",
    "03.many_small_messages_ms": 10.05,
    "03.one_message_us": 60,
    "03.best_chunk": "4",
    "03.speedup_10_workers": 2,
    "03.efficiency_10_workers": 0.2,
    "03.gemm_8x_total_ms": 30,
    "03.gemm_8x_speedup": 100 / 30,
    "03.amdahl_limit": 5,
    "03.gemm_16x_overhead_ms": 30,
    "03.gemm_16x_worth_it": False,
    "03.round2_reason": "c",
    "03.split_writes": "b",
    "03.amdahl_s_meaning": "a",
    "03.gpu_lanes_as_cores": False,
    # the execution model (section 10), worked out by hand
    "03.block_on_one_sm": "c",
    "03.warp_of_thread": (5 * 16 + 3) // 32,
    "03.column_read_sectors": 32,
    "03.bank_ways_stride_32": 32,
    "03.bank_ways_stride_33": 1,
    "03.scheduler_while_waiting": "b",
    "03.occupancy_warps": 65536 // (256 * 128) * (256 // 32),
}

# the execution model's known wrong answers and the misconception each one's feedback names
MISCONCEPTIONS = {
    "03.block_on_one_sm": ("a", "never spans SMs"),
    "03.warp_of_thread": (5, "linear id"),
    "03.column_read_sectors": (4, "coalesced"),
    "03.bank_ways_stride_32": (1, "different addresses are not different banks"),
    "03.bank_ways_stride_33": (32, "stride between lanes"),
    "03.scheduler_while_waiting": ("a", "latency hiding"),
    "03.occupancy_warps": (64, "Registers bind first"),
}


def test_every_question_is_covered_here():
    # the warm-up puzzles are kernels, judged with their broken variants in test_labs_puzzles.py
    puzzles = {q for q in lesson_questions(3) if ".puzzle_" in q}
    assert len(puzzles) == 8
    assert set(lesson_questions(3)) == set(EXPECTED) | {"03.amdahl_function"} | puzzles


@pytest.mark.parametrize("qid", sorted(EXPECTED))
def test_lesson_figure_passes(qid):
    r = judge(qid, EXPECTED[qid])
    assert r.status == PASS, r.feedback


def test_amdahl_reference_matches_the_library_on_random_values():
    rng = np.random.default_rng()
    import gemmlab as gl
    s, p = float(rng.uniform(0, 1)), float(rng.uniform(1, 100))
    assert get_question("03.amdahl_function").answer(s, p) == pytest.approx(gl.perfmodel.amdahl(s, p))


@pytest.mark.parametrize("qid", sorted(MISCONCEPTIONS))
def test_execution_model_wrong_answer_names_its_misconception(qid):
    wrong, words = MISCONCEPTIONS[qid]
    r = judge(qid, wrong)
    assert r.status == "fail" and words in r.feedback, r.feedback
