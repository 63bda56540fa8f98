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
    "05.sram_is_shared": "a",
}


def test_every_question_has_a_solution_here():
    # the kernel labs (NN.lab_*) are code, judged on the instrumented simulator by their own tests
    values = [q for q in lesson_questions("05") if not q.split(".", 1)[1].startswith("lab_")]
    assert sorted(values) == sorted(SOLUTIONS)


@pytest.mark.parametrize("qid", sorted(SOLUTIONS))
def test_lesson_figure_passes(qid):
    assert judge(qid, SOLUTIONS[qid]).status == "pass"
