"""Lesson 15's questions: the seed's published answers pass, every known wrong answer fails with
its own feedback, and no answer is "not attempted"."""
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
}


def test_every_question_has_a_solution_here():
    assert sorted(lesson_questions("15")) == sorted(SOLUTIONS)


@pytest.mark.parametrize("qid", sorted(SOLUTIONS))
def test_solution_passes_and_missing_answer_is_not_attempted(qid):
    assert judge(qid, SOLUTIONS[qid]).status == "pass"
    assert judge(qid, ...).status == "not attempted"
