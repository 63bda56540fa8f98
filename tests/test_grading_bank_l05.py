"""Lesson 05's questions: the figures the lesson works out, written here by hand, pass. Every
reference, known wrong answer and unanswered question of the bank is checked once, in
test_grading_bank.py."""
import pytest

from gemmlab.grading import judge
from gemmlab.grading.bank import lesson_questions

SOLUTIONS = {
    "05.gemm_entry": 2.0 * (1 * 4 + 2 * 5 + 3 * 6) + 0.5 * 10.0,
    "05.tile_reuse_factor": 16,
    "05.output_tiles": 16,
    "05.smem_bytes": 8192,
    "05.max_tile_side": 32,
    "05.sram_is_shared": "b",
    "05.traffic_ratio": (2 * 128**3 + 128**2) / (2 * 128**3 / 32 + 128**2),   # 28.56
    "05.transpose_conflict_ways": 32,     # lane tx reads word 32 tx + ty: all in bank ty
}


def test_every_question_has_a_solution_here():
    # the kernel labs (NN.lab_*) are code, judged on the instrumented simulator by their own tests
    values = [q for q in lesson_questions("05") if not q.split(".", 1)[1].startswith("lab_")]
    assert sorted(values) == sorted(SOLUTIONS)


@pytest.mark.parametrize("qid", sorted(SOLUTIONS))
def test_lesson_figure_passes(qid):
    assert judge(qid, SOLUTIONS[qid]).status == "pass"


def test_reading_o_n3_over_t_as_a_byte_count_is_named():
    r = judge("05.traffic_ratio", 32)
    assert r.status == "fail" and "not an exact byte count" in r.feedback, r.feedback
    assert judge("05.traffic_ratio", 28.6).status == "pass"


def test_the_padded_tiles_conflict_free_read_is_not_the_unpadded_ones():
    r = judge("05.transpose_conflict_ways", 1)
    assert r.status == "fail" and "padded tile" in r.feedback and "same bank" in r.feedback, r.feedback
