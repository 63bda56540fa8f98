"""Lesson 14's questions: the figures the lesson works out, written here by hand, pass. Every
reference, known wrong answer and unanswered question of the bank is checked once, in
test_grading_bank.py."""
import numpy as np
import pytest

import gemmlab as gl
from gemmlab.grading import judge
from gemmlab.grading.bank import get_question, lesson_questions


def _rank_partial_attention(X, Wq, Wk, Wv, Wo, n_heads, p, r):
    w = Wq.shape[1] // p
    block = slice(r * w, (r + 1) * w)
    O_r = gl.parallel.head_attention(X @ Wq[:, block], X @ Wk[:, block], X @ Wv[:, block],
                                     n_heads // p, n_heads // p)
    return O_r @ Wo[block]


# The seed's answers (d_model = 4096, h = 32, TP = 8) and the lesson's, worked out by hand.
SOLUTIONS = {
    "14.heads_per_rank": 4,
    "14.local_q_width": 512,
    "14.WO_r_shape": (512, 4096),
    "14.P_r_shape": (2048, 4096),
    "14.exit_merge": "sum",
    "14.WO_split": "row",
    "14.gqa_kv_heads_per_rank": 2,
    "14.mqa_kv_layout": "replicated",
    "14.max_tp_for_12_heads": 4,
    "14.rank_partial_attention": _rank_partial_attention,
    "14.q_shards_merge": "concat",
    "14.gather_after_qkv": False,
    "14.heads_never_mix": False,
}


def test_every_question_has_a_solution_here():
    # the labs' programs, written by hand with their broken variants, are in tests/test_labs_*.py
    assert sorted(q for q in lesson_questions("14") if ".lab_" not in q) == sorted(SOLUTIONS)


@pytest.mark.parametrize("qid", sorted(SOLUTIONS))
def test_lesson_figure_passes(qid):
    assert judge(qid, SOLUTIONS[qid]).status == "pass"


def test_partial_outputs_of_all_ranks_add_up_to_the_layer():
    q = get_question("14.rank_partial_attention")
    for X, Wq, Wk, Wv, Wo, h, p, _ in q.kind.cases():
        total = sum(q.answer(X, Wq, Wk, Wv, Wo, h, p, r) for r in range(p))
        np.testing.assert_allclose(total, gl.parallel.attention_reference(X, Wq, Wk, Wv, Wo, h),
                                   rtol=1e-10, atol=1e-12)
