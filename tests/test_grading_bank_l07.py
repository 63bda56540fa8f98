"""Lesson 07's questions: the figures the lesson works out, written here by hand, pass. Every
reference, known wrong answer and unanswered question of the bank is checked once, in
test_grading_bank.py."""
import pytest

from gemmlab.grading import judge
from gemmlab.grading.bank import lesson_questions

# Written as a student would, from the seed's worked answers (lesson 03 and the synthesis).
SOLUTIONS = {
    "07.ring_send_mib": 2 * (1 - 1 / 8) * 256,                  # the seed: 448 MiB
    "07.ring_send_recv_mib": 448 + 448,                         # the seed: 896 MiB
    "07.ring_send_gib": 2 * (1 - 1 / 8) * 1,                    # the synthesis: 1.75 GiB
    "07.root_traffic_mib": 2 * (8 - 1) * 256,
    "07.ring_steps": 2 * (128 - 1),
    "07.after_reduce_scatter": "one summed chunk",
    "07.allgather_adds": False,
    "07.total_bytes_ratio": 1.0,
    "07.busbw_gbs": 2**30 / 10e-3 / 1e9 * 2 * 7 / 8,
    "07.ring_time_ms": (2 * 7 * 5e-6 + 2 * 7 / 8 * 256 * 2**20 / 100e9) * 1e3,
    "07.small_message_winner": "Tree",
    "07.alpha_term_trend": "grows",
    "07.rs_send_chunk": lambda rank, step, n: (rank - 1 - step) % n,
    "07.allreduce_who": "every rank",
    "07.ring_send_4_ranks_s": 1.5,
    "07.ring_send_128_ranks_s": 1.984375,
    "07.addition_pass_mib": 128 + 128 + 128,     # read two halves of 256 MiB, write one (N = 2)
    "07.double_tree_bytes_s": 2 * (6 + 1000 - 1) / 1000,   # two pipelined phases of d + k - 1 rounds
}


def test_every_question_has_a_solution_here():
    # the labs' programs, written by hand with their broken variants, are in tests/test_labs_*.py
    assert sorted(q for q in lesson_questions("07") if ".lab_" not in q) == sorted(SOLUTIONS)


def test_the_design_example_is_the_seed_exercise():
    assert judge("07.ring_send_mib", 448).status == "pass"
    assert judge("07.ring_send_recv_mib", 896).status == "pass"
    assert judge("07.ring_send_gib", 1.75).status == "pass"


@pytest.mark.parametrize("qid", sorted(SOLUTIONS))
def test_lesson_figure_passes(qid):
    assert judge(qid, SOLUTIONS[qid]).status == "pass", judge(qid, SOLUTIONS[qid]).feedback


def test_wrong_types_fail_without_raising():
    assert judge("07.ring_send_mib", "448 MiB").status == "fail"
    assert judge("07.rs_send_chunk", 3).status == "fail"
    assert judge("07.rs_send_chunk", lambda rank, step, n: 1 / 0).status == "fail"


@pytest.mark.parametrize("wrong,words", [(12, "binomial tree"), (2 * 63 / 64, "the ring's")])
def test_the_pipelined_tree_is_not_the_binomial_one(wrong, words):
    r = judge("07.double_tree_bytes_s", wrong)
    assert r.status == "fail" and words in r.feedback, r.feedback
