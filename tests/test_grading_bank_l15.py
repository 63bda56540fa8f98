"""Lesson 15's questions: the figures the lesson works out, written here by hand, pass. Every
reference, known wrong answer and unanswered question of the bank is checked once, in
test_grading_bank.py."""
import pytest

from gemmlab.grading import judge
from gemmlab.grading.bank import lesson_questions

# The seed's reference answers to the unit's synthesis exercises.
SOLUTIONS = {
    "15.column_W_r_shape": (4096, 4096),
    "15.column_H_r_shape": (32, 4096),
    "15.middle_allgather": False,
    "15.ring_send_gib": 1.75,
    "15.ring_send_recv_gib": 3.5,
    "15.single_buffer_us": 320,
    "15.double_buffer_us": 206,
    "15.double_buffer_fewer_bytes": False,
    "15.tensor_core_whole_gemm": False,
    "15.onchip_is_cache": False,
}


def test_every_question_has_a_solution_here():
    # the labs' programs, written by hand with their broken variants, are in tests/test_labs_*.py
    assert sorted(q for q in lesson_questions("15") if ".lab_" not in q) == sorted(SOLUTIONS)


@pytest.mark.parametrize("qid", sorted(SOLUTIONS))
def test_lesson_figure_passes(qid):
    assert judge(qid, SOLUTIONS[qid]).status == "pass"
