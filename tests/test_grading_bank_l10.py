"""Lesson 10's questions: the figures the lesson works out, written here by hand, pass. Every
reference, known wrong answer and unanswered question of the bank is checked once, in
test_grading_bank.py."""
import pytest

from gemmlab.grading import judge
from gemmlab.grading.bank import lesson_questions

SOLUTIONS = {
    "10.baseline_reads": 64,
    "10.outer_reads": 256,
    "10.ratio_gain": 4.0,
    "10.four_x_faster": False,
    "10.slots_m_n": lambda m, n: m * n + m + n,
    "10.one_output_per_thread": False,
    "10.outer_fewer_flops": False,
    "10.step_reads_4x8": 12,
    "10.step_fmas_4x8": 32,
    "10.l1_slots_are_registers": False,
    "10.l1_resident_warps": 48,           # 40 x 32 = 1280 per warp, 10240 per block: 6 blocks of 8
}


def test_every_question_has_a_solution_here():
    # the kernel labs (NN.lab_*) are code, judged on the instrumented simulator by their own tests
    values = [q for q in lesson_questions("10") if not q.split(".", 1)[1].startswith("lab_")]
    assert sorted(values) == sorted(SOLUTIONS)


@pytest.mark.parametrize("qid", sorted(SOLUTIONS))
def test_lesson_figure_passes(qid):
    assert judge(qid, SOLUTIONS[qid]).status == "pass"


def test_slot_counts_read_as_physical_registers_are_named():
    r = judge("10.l1_slots_are_registers", True)
    assert r.status == "fail" and "not a physical register count" in r.feedback, r.feedback


def test_the_sms_warp_limit_is_not_the_occupancy_registers_allow():
    r = judge("10.l1_resident_warps", 64)
    assert r.status == "fail" and "Registers per thread set the occupancy" in r.feedback, r.feedback
    assert judge("10.l1_resident_warps", 6).status == "fail"      # blocks, not warps
