"""Lesson 00's questions: the figures the lesson works out, written here by hand, pass (every
reference, known wrong answer and unanswered question is checked once in test_bank.py)."""
import pytest

from gemmlab.grading import PASS, judge
from gemmlab.grading.bank import lesson_questions

EXPECTED = {  # the opening lecture's answers and figures, written out
    "00.matrix_mib": 4,
    "00.token_is_word": False,
    "00.where_parallel": "b",
    "00.streaming_hides": "c",
    "00.prefetch_overlap": "b",
    "00.loop_with_workers_ms": 24 + 8 * (4 + 10),
    "00.line_operator_kernel": "c",
    "00.two_cards": "a",
    "00.hbm_over_pcie": 4800 / 64,
    "00.same_python": "c",
    "00.in_memory_is_in_core": False,
    "00.every_gpu_hbm": False,
    "00.energy_twh": 2.628,
    "00.megawatts_compute": "b",
    "00.loss_is_accuracy": False,
    "00.frame_pixels_per_second": 4.98e8,          # 3840 x 2160 x 60
    "00.frame_parallel": "a",
}


def test_every_question_of_the_lesson_is_written_out_here():
    assert set(lesson_questions(0)) == set(EXPECTED)


@pytest.mark.parametrize("qid", sorted(EXPECTED))
def test_lesson_figure_passes(qid):
    r = judge(qid, EXPECTED[qid])
    assert r.status == PASS, r.feedback
