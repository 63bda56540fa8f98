"""Lesson 02's questions: the figures the lesson works out, written here by hand, pass. Every
reference, known wrong answer and unanswered question of the bank is checked once, in
test_grading_bank.py."""
import numpy as np
import pytest

from gemmlab.grading import FAIL, PASS, judge
from gemmlab.grading.bank import get_question, lesson_questions

EXPECTED = {  # the lesson's figures written out (the seed's own numbers where it gives them)
    "02.two_neurons": [[58, 64], [139, 154]],
    "02.linear_weight_shape": (2048, 512),
    "02.linear_layer_output": [[58, 64], [139, 154]],
    "02.b_row_stride": 70,
    "02.byte_address": 4096 + (2 * 10 + 7) * 4,
    "02.transpose_strides": (4, 2048),
    "02.b_row_stride_reason": "b",
    "02.plus_equals_meaning": "c",
}


def test_every_question_is_covered_here():
    assert set(lesson_questions(2)) == set(EXPECTED) | {"02.row_major_index", "02.naive_matmul"}


@pytest.mark.parametrize("qid", sorted(EXPECTED))
def test_lesson_figure_passes(qid):
    r = judge(qid, EXPECTED[qid])
    assert r.status == PASS, r.feedback


def test_row_major_index_agrees_with_numpy():
    rng = np.random.default_rng()
    rows, cols = (int(v) for v in rng.integers(1, 20, size=2))
    r, c = int(rng.integers(rows)), int(rng.integers(cols))
    fn = get_question("02.row_major_index").answer
    assert fn(r, c, rows, cols) == np.ravel_multi_index((r, c), (rows, cols))


def test_naive_matmul_reference_matches_numpy_on_random_floats():
    rng = np.random.default_rng()
    A, B = rng.standard_normal((5, 7)), rng.standard_normal((7, 3))
    np.testing.assert_allclose(get_question("02.naive_matmul").answer(A, B), A @ B, rtol=1e-12)


def test_a_function_answer_that_raises_is_reported_not_raised():
    def broken(A, B):
        raise IndexError("k out of range")
    r = judge("02.naive_matmul", broken)
    assert r.status == FAIL and "IndexError" in r.feedback
