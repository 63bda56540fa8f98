"""Lesson 08's questions: the figures the lesson works out, written here by hand, pass. Every
reference, known wrong answer and unanswered question of the bank is checked once, in
test_grading_bank.py."""
import pytest

from gemmlab.grading import judge
from gemmlab.grading.bank import lesson_questions

SOLUTIONS = {
    "08.serial_us": 80.0,
    "08.double_buffer_us": 56.0,
    "08.stage_us": 12.0,
    "08.load_bound_stage_us": 12.0,
    "08.buffers_hold": "input tiles",
    "08.pingpong_smem_bytes": 16384,
    "08.two_arrays_overlap": "c",
    "08.swap_guard": "a",
    "08.reverse_barriers": 1 + 4,         # the prologue's, then one per chunk of 103 = 3 x 32 + 7
    "08.reverse_prefetch_sectors": 4,     # 32 neighbouring floats = 128 bytes
}


def test_every_question_has_a_solution_here():
    # the kernel labs (NN.lab_*) are code, judged on the instrumented simulator by their own tests
    values = [q for q in lesson_questions("08") if not q.split(".", 1)[1].startswith("lab_")]
    assert sorted(values) == sorted(SOLUTIONS)


@pytest.mark.parametrize("qid", sorted(SOLUTIONS))
def test_lesson_figure_passes(qid):
    assert judge(qid, SOLUTIONS[qid]).status == "pass"


def test_two_barriers_per_chunk_is_named_as_the_single_buffers_count():
    r = judge("08.reverse_barriers", 1 + 2 * 4)
    assert r.status == "fail" and "one barrier per chunk suffices" in r.feedback, r.feedback
    r = judge("08.reverse_barriers", 4)
    assert r.status == "fail" and "prologue" in r.feedback, r.feedback


def test_one_sector_per_lane_is_named_uncoalesced():
    r = judge("08.reverse_prefetch_sectors", 32)
    assert r.status == "fail" and "coalesced" in r.feedback, r.feedback
