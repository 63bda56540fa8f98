"""Lab 12: the fragment API, and each feedback message of 12.lab_wmma with the fragment loop it
is for (the solution with one edit)."""
import dataclasses
import re

import numpy as np
import pytest

from gemmlab.grading import judge
from gemmlab.labs import wmma
from gemmlab.labs.solutions import cell, solution
from gemmlab.judging import load_function

QID = "12.lab_wmma"


def variant(*edits):
    source, name, label = cell(QID)
    for old, new in edits:
        assert source.count(old) == 1, old
        source = source.replace(old, new)
    return load_function(source, name, f"{label} (edited: {abs(hash(edits))})")


def test_fragments_compute_a_gemm_with_zeros_past_the_edges():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((20, 7)).astype(np.float16)
    B = rng.standard_normal((7, 18)).astype(np.float16)
    C = np.zeros((20, 18), np.float32)
    solution(QID)(A, B, C)          # plain arrays work outside a check
    ref = A.astype(np.float64) @ B.astype(np.float64)
    assert np.allclose(C, ref, rtol=1e-5, atol=1e-5)
    with pytest.raises(wmma.FragmentError, match="origin is outside"):
        wmma.load_matrix_sync(A, 20, 0)
    with pytest.raises(wmma.FragmentError, match="c must be an accumulator"):
        a = wmma.load_matrix_sync(A, 0, 0)
        wmma.mma_sync(a, a, a)


A16 = np.ones((20, 20), np.float16)
ACC = wmma.fill_fragment(0.0)


@pytest.mark.parametrize("call,words", [
    (lambda: wmma.load_matrix_sync([[1.0]], 0, 0), "load_matrix_sync needs a 2-D matrix"),
    (lambda: wmma.load_matrix_sync(A16, 0.5, 0), "row must be a whole number"),
    (lambda: wmma.load_matrix_sync(A16.astype(np.float64), 0, 0), "got float64"),
    (lambda: wmma.mma_sync(A16, ACC, ACC), "mma_sync: a must be a fragment, got ndarray"),
    (lambda: wmma.mma_sync(ACC, ACC, ACC), "a must be an input fragment"),
    (lambda: wmma.store_matrix_sync(np.zeros((4, 4), np.float32), 0, 0,
                                    wmma.load_matrix_sync(A16, 0, 0)), "must be an accumulator"),
])
def test_fragment_calls_with_wrong_arguments_say_what_was_expected(call, words):
    with pytest.raises(wmma.FragmentError, match=words.replace("(", r"\(")):
        call()


LOOP_K = ("            for k in range(0, K, 16):\n                a = wmma.load_matrix_sync(A, i, k)\n"
          "                b = wmma.load_matrix_sync(B, k, j)\n                acc = wmma.mma_sync(a, b, acc)\n"
          "            wmma.store_matrix_sync(C, i, j, acc)  # once, after the K loop")
BROKEN = [
    ("store inside the K loop", [(LOOP_K, LOOP_K.replace("\n            wmma.store", "\n                wmma.store"))],
     ["the C fragment at (0, 0) was stored 3 times (after 1, 2, 3 MMA steps)", "a store inside the K loop"]),
    ("C loaded into the accumulator", [("acc = wmma.fill_fragment(0.0)", "acc = wmma.load_matrix_sync(C, i, j)")],
     ["you loaded C into the accumulator", "C += AB"]),
    ("loop misses the edge", [("for i in range(0, M, 16):", "for i in range(0, M - 15, 16):")],
     ["18 calls of mma_sync, but the product needs 27 (3 x 3 x 3", "range(0, M, 16)"]),
    ("MMA twice per step", [("acc = wmma.mma_sync(a, b, acc)", "acc = wmma.mma_sync(a, b, wmma.mma_sync(a, b, acc))")],
     ["54 calls of mma_sync, but the product needs 27", "adds steps"]),
    ("A and B swapped", [("a = wmma.load_matrix_sync(A, i, k)", "a = wmma.load_matrix_sync(B, i, k)"),
                         ("b = wmma.load_matrix_sync(B, k, j)", "b = wmma.load_matrix_sync(A, k, j)")],
     ["the result equals B @ A", "A and B swapped roles"]),
    ("operands of mma_sync swapped", [("acc = wmma.mma_sync(a, b, acc)", "acc = wmma.mma_sync(b, a, acc)")],
     ["what mma_sync(b, a, acc) gives", "pass the fragment of A first"]),
    ("edge fragments not stored", [("            wmma.store_matrix_sync(C, i, j, acc)  # once, after the K loop",
                                    "            if j + 16 <= N:\n                wmma.store_matrix_sync(C, i, j, acc)")],
     ["C[0, 32] was never stored", "poison"]),
    ("a wrong fragment", [("acc = wmma.mma_sync(a, b, acc)", "acc = wmma.mma_sync(a, b, b)")],
     ["raised FragmentError: mma_sync: c must be an accumulator", "at line"]),
    ("C written directly", [("            wmma.store_matrix_sync(C, i, j, acc)  # once, after the K loop",
                             "            C[i, j] = 0")],
     ["only read and written through fragments"]),
    ("a fragment past the edge", [("for k in range(0, K, 16):", "for k in range(0, K + 16, 16):")],
     ["load_matrix_sync(A, 0, 48): the fragment's origin is outside A, which is 40 x 40"]),
    ("wrong values", [("b = wmma.load_matrix_sync(B, k, j)", "b = wmma.load_matrix_sync(B, j, k)")],
     ["B's fragment loaded at (j, k) instead of (k, j)", "rows k, columns j"]),   # named
]


@pytest.mark.parametrize("edits,words", [b[1:] for b in BROKEN], ids=[b[0] for b in BROKEN])
def test_each_mistake_fails_with_its_own_message(edits, words):
    result = judge(QID, variant(*edits))
    assert result.status == "fail", result.feedback
    for word in words:
        assert word in result.feedback, result.feedback


def test_the_reference_passes_public_and_hidden_cases_and_the_skeleton_is_not_attempted():
    result = judge(QID, solution(QID))
    assert result.status == "pass" and "27 MMA steps" not in result.feedback
    status, text = wmma.LAB.verdict(solution(QID), np.random.default_rng(7))
    assert status == "pass", text
    assert judge(QID, solution(QID, folder="exercises")).status == "not attempted"


def test_an_endless_loop_is_stopped():
    def spins(A, B, C):
        while True:
            pass
    status, text = dataclasses.replace(wmma.LAB, time_limit=0.5).verdict(spins)
    assert status == "fail" and "did not finish within 0.5 s" in text
    line = spins.__code__.co_firstlineno + 1
    assert re.search(rf"it was at line ({line}|{line + 1}) \(`(while True:|pass)`\)", text), text


@pytest.mark.parametrize("answer,words", [
    (solution("05.lab_naive"), "not a @cuda.jit kernel"),
    (lambda A, B: None, "takes 2 parameters"),
    ("lab_wmma", "expected a function"),
])
def test_what_is_not_a_fragment_loop_is_refused(answer, words):
    result = judge(QID, answer)
    assert result.status == "fail" and words in result.feedback


THROW_AWAY_MMAS = '''from gemmlab.labs import wmma


def lab_wmma(A, B, C):
    M, K = A.shape
    N = B.shape[1]
    acc = wmma.fill_fragment(0.0)
    a, b = wmma.load_matrix_sync(A, 0, 0), wmma.load_matrix_sync(B, 0, 0)
    for _ in range(-(-M // 16) * -(-N // 16) * -(-K // 16)):
        acc = wmma.mma_sync(a, b, acc)      # the MMA count, made on a throw-away fragment
'''


@pytest.mark.parametrize("write, words", [
    ("    C.data[:] = A.data.dot(B.data)\n", "'Operand' object has no attribute 'data'"),
    ("    match A, B, C:\n        case object(_array=a), object(_array=b), object(_array=c):\n"
     "            c[:] = a.dot(b)\n", "was written outside wmma.store_matrix_sync"),
])
def test_a_c_written_past_the_fragments_fails_in_check_and_in_a_graded_run(write, words):
    """Issue 54: the operand's array was public, and nothing checked that C came from stores of
    accumulators; this passed with the right MMA count made on a throw-away fragment."""
    from gemmlab_grader.isolate import judge_code
    source = THROW_AWAY_MMAS + write
    checked = judge(QID, load_function(source, "lab_wmma", f"<attack {abs(hash(write))}>"))
    graded = judge_code(QID, source, "lab_wmma", seed=5, timeout=240)
    for result in (checked, graded):
        assert result.status == "fail" and words in result.feedback, result.feedback
