"""Lesson 13's questions: the figures the lesson works out, written here by hand, pass. Every
reference, known wrong answer and unanswered question of the bank is checked once, in
test_grading_bank.py."""
import pytest

from gemmlab.grading import judge
from gemmlab.grading.bank import lesson_questions


def _coords_of(rank, tp, cp, dp, pp):
    i_tp, rest = rank % tp, rank // tp
    i_cp, rest = rest % cp, rest // cp
    return (i_tp, i_cp, rest % dp, rest // dp)


# The seed's answers (DP = 4, PP = 2, CP = 2, TP = 8 -> 128 ranks, TP groups of 8) and the
# lesson's, worked out by hand.
SOLUTIONS = {
    "13.total_ranks": 128,
    "13.tp_group_size": 8,
    "13.dp_group_members": [1, 5],
    "13.rank_of_coords": 3 + 8 * (1 + 2 * (2 + 4 * 1)),
    "13.pp_axis": "layers",
    "13.cp_axis": "tokens",
    "13.orthogonal_means_independent": False,
    "13.coords_of": _coords_of,
    "13.tp_group_fixes": "c",
    "13.four_d_meaning": "b",
    "13.dp_full_copy": False,
    "13.tp_splits": "a",
    "13.work_volume_stored": "a",
    "13.b_axis_meaning": "a",
    "13.bubble_fraction": 3 / 11,
    "13.one_f_one_b_held": 4,
    "13.zero2_gb": 26.25,
    "13.cp_states_divide": False,
    "13.ring_attention_mib": 96,
}


def test_every_question_has_a_solution_here():
    # the labs' programs, written by hand with their broken variants, are in tests/test_labs_*.py
    assert sorted(q for q in lesson_questions("13") if ".lab_" not in q) == sorted(SOLUTIONS)


@pytest.mark.parametrize("qid", sorted(SOLUTIONS))
def test_lesson_figure_passes(qid):
    assert judge(qid, SOLUTIONS[qid]).status == "pass"


def test_a_group_in_the_wrong_order_fails():
    assert judge("13.dp_group_members", [5, 1]).status == "fail"


@pytest.mark.parametrize("qid,wrong,words", [
    ("13.bubble_fraction", 3 / 8, "(p-1)/(m+p-1)"),
    ("13.bubble_fraction", 0, "does not remove the bubble"),
    ("13.one_f_one_b_held", 8, "that is GPipe"),
    ("13.zero2_gb", 112, "plain DP"),
    ("13.zero2_gb", 14, "ZeRO-3"),
    ("13.cp_states_divide", True, "shards the sequence, not the weights"),
    ("13.ring_attention_mib", 32, "passed on cp - 1 times"),
    ("13.ring_attention_mib", 128, "whole sequence"),
])
def test_the_cost_misconceptions_are_named(qid, wrong, words):
    r = judge(qid, wrong)
    assert r.status == "fail" and words in r.feedback, r.feedback
