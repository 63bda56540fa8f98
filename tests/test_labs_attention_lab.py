"""Lesson 16's kernels (gemmlab/labs/attention_lab.py, attention_cases.py, attention_feedback.py):
the solutions pass their public and hidden cases, the skeletons are not attempted, and each
classic mistake of a fused attention kernel fails with its name. Each broken kernel is the
solution of solutions/16 with one small edit."""
import dataclasses

import numpy as np
import pytest

import gemmlab as gl
from gemmlab.grading import judge
from gemmlab.grading.bank import get_question
from gemmlab.labs import attention_cases
from gemmlab.labs.attention_lab import LABS
from gemmlab.labs.solutions import solution
from solution_variants import variant

pytestmark = pytest.mark.skipif(gl.device.backend() != "sim",
                                reason="the instrumented simulator runs on the simulator backend")
QUESTIONS = [f"16.{name}" for name in LABS]


def verdict(qid, kernel):
    return get_question(qid).kind.verdict(kernel)


@pytest.mark.parametrize("qid", QUESTIONS)
def test_the_solution_passes_the_public_and_hidden_cases(qid):
    kind = get_question(qid).kind
    status, text = kind.verdict(solution(qid))
    assert status == "pass", text
    status, text = kind.verdict(solution(qid), np.random.default_rng(2024))
    assert status == "pass", text


def _student038_case():
    """The hidden case that failed the solution in a graded class of 100 (--seed 1): N = 11,
    d = 64, causal, whose hot row has two scores near the top (999.4 and 1000.0), so their
    float32 rounding moves the output by 1.4e-4, past a flat 1e-4."""
    from gemmlab_grader import secret
    from gemmlab_grader.grade import case_seed
    seed = case_seed(secret.new(1), "student038", "16.lab_flash")
    return seed, next(c for c in LABS["lab_flash"].cases(np.random.default_rng(seed))
                      if c.label == "N = 11, d = 64, causal")


def test_the_solution_passes_the_hidden_cases_that_once_failed_it_in_a_graded_class():
    seed, _ = _student038_case()
    kind = get_question("16.lab_flash").kind
    status, text = kind.verdict(solution("16.lab_flash"), np.random.default_rng(seed))
    assert status == "pass", text


def _hot_row_in_order(case):
    """The hot (last) row as a kernel thread computes it: each score summed in float32 in order
    over d, as the lab's solution does, then softmax and the weighted mean in float32."""
    Q, K, V = (case.inputs[n] for n in "QKV")
    q, scale = Q[-1], np.float32(1 / np.sqrt(Q.shape[1]))
    scores = np.empty(K.shape[0], np.float32)
    for j, k in enumerate(K):
        total = np.float32(0)
        for c in range(q.size):
            total = np.float32(total + q[c] * k[c])
        scores[j] = total * scale
    w = np.exp(scores - scores.max())
    return (w @ V) / w.sum()


def test_the_rounding_slack_holds_float32_kernels_and_only_the_hot_row_needs_it():
    # Float32 tiled attention (NumPy's sums) for every row, and the hot row summed in order as a
    # kernel thread does, against the float64 reference on 60 fresh cases and student038's: always
    # within TOLERANCE + slack, and within the flat TOLERANCE but in the hot row
    rng = np.random.default_rng()
    cases = [attention_cases.flash_case(rng, int(rng.choice([11, 13, 29, 45])),
                                        int(rng.choice([32, 64])), causal)
             for _ in range(30) for causal in (True, False)] + [_student038_case()[1]]
    for case in cases:
        Q, K, V = (case.inputs[n] for n in "QKV")
        out = gl.attention.tiled_attention(Q, K, V, attention_cases.BR, attention_cases.BC,
                                           case.causal, dtype=np.float32).O
        out[-1] = _hot_row_in_order(case)           # the last row attends to every key
        err = np.abs(out - case.expected)
        assert (err <= attention_cases.TOLERANCE + case.slack).all(), case.label
        assert (err[:-1] <= attention_cases.TOLERANCE).all(), case.label
    assert err[-1].max() > attention_cases.TOLERANCE        # student038's needs the slack


@pytest.mark.parametrize("qid", QUESTIONS)
def test_the_skeleton_students_get_is_not_attempted(qid):
    result = judge(qid, solution(qid, folder="exercises"))
    assert result.status == "not attempted", result.feedback


def test_hidden_cases_have_odd_n_both_widths_and_both_masks():
    for seed in range(10):
        cases = LABS["lab_flash"].cases(np.random.default_rng(seed))
        assert all(c.inputs["Q"].shape[0] % 2 and c.inputs["Q"].shape[0] % 8 for c in cases)
        assert {c.inputs["Q"].shape[1] for c in cases} == {32, 64}
        assert {c.causal for c in cases} == {True, False}


def test_the_pass_reports_k_read_once_per_query_tile():
    status, text = verdict("16.lab_flash", solution("16.lab_flash"))
    N, d = 13, 64                           # the largest public case
    budget = attention_cases.flash_reads(N, d, causal=True)
    assert status == "pass" and f"K was read {budget} times for its {N * d} elements" in text


# -- the lab's classic mistakes: (edits of the solution, what the feedback must say) -----------
LAB_MISTAKES = {
    "accumulator not rescaled": (
        [("acc[c] = acc[c] * gap + p * Vs[jj, c]", "acc[c] = acc[c] + p * Vs[jj, c]")],
        "the accumulator not rescaled"),
    "no max subtraction": (
        [("gap = math.exp(m - m_new)", "gap = 1.0"), ("p = math.exp(s - m_new)", "p = math.exp(s)")],
        "no max subtraction: exp of a raw score overflows"),
    "no barrier between K/V tiles": (
        [("        cuda.syncthreads()                                       # before the next "
          "tile's loads\n", "")],
        "a missing barrier between K/V tiles"),
    "causal mask off by one": (
        [("if causal and j > i:", "if causal and j >= i:")],
        "a causal mask off by one"),
    "K and V read per row (S from global memory)": (
        [("s += Q[i, c] * Ks[jj, c]", "s += Q[i, c] * K[j, c]"),
         ("acc[c] * gap + p * Vs[jj, c]", "acc[c] * gap + p * V[j, c]")],
        "Each thread read the keys itself, about once per query row"),
    "causal tiles not skipped": (
        [("end = min(cuda.blockIdx.x * 8 + 8, N) if causal else N", "end = N")],
        "skip those tiles"),
    "keys past N read from the tile": (
        [("for jj in range(min(8, N - j0)):", "for jj in range(8):")],
        "keys past N counted"),
}


@pytest.mark.parametrize("mistake", sorted(LAB_MISTAKES))
def test_each_classic_mistake_of_the_lab_fails_with_its_name(mistake):
    edits, message = LAB_MISTAKES[mistake]
    status, text = verdict("16.lab_flash", variant("16.lab_flash", *edits))
    assert status == "fail" and message in text, text


PUZZLE_MISTAKES = {
    ("16.puzzle_online_softmax", "sum not rescaled"): (
        [("l = l * math.exp(m - m_new) + math.exp(s - m_new)", "l = l + math.exp(s - m_new)")],
        "the running sum not rescaled"),
    ("16.puzzle_online_softmax", "no max subtraction"): (
        [("l = l * math.exp(m - m_new) + math.exp(s - m_new)", "l = l + math.exp(s)"),
         ("out[i, j] = math.exp(x[i, j] - m) / l", "out[i, j] = math.exp(x[i, j]) / l")],
        "no max subtraction"),
    ("16.puzzle_online_softmax", "a pass for the max first"): (
        [("        m = -math.inf\n", "        m = -math.inf\n        for j in range(x.shape[1]):\n"
                                     "            m = max(m, x[i, j])\n")],
        "A pass for the max, one for the sum and one for out reads x three times"),
    ("16.puzzle_merge", "sums not rescaled"): (
        [("sl[t] = sl[t] * math.exp(m1 - m) + sl[t + stride] * math.exp(m2 - m)",
          "sl[t] = sl[t] + sl[t + stride]")],
        "the partial sums not rescaled"),
    ("16.puzzle_merge", "no barrier between levels"): (
        [("        cuda.syncthreads()\n        stride //= 2", "        stride //= 2")],
        "a missing barrier between the levels of the tree"),
}


@pytest.mark.parametrize("puzzle, mistake", sorted(PUZZLE_MISTAKES))
def test_each_mistake_of_the_puzzles_fails_with_its_name(puzzle, mistake):
    edits, message = PUZZLE_MISTAKES[puzzle, mistake]
    status, text = verdict(puzzle, variant(puzzle, *edits))
    assert status == "fail" and message in text, text


def test_a_mistake_is_named_on_hidden_cases_too():
    edits, message = LAB_MISTAKES["accumulator not rescaled"]
    kernel = variant("16.lab_flash", *edits)
    status, text = get_question("16.lab_flash").kind.verdict(kernel, np.random.default_rng(3))
    assert status == "fail" and message in text, text


def test_the_lab_is_judged_through_check_like_every_kernel_lab():
    edits, message = LAB_MISTAKES["causal mask off by one"]
    result = judge("16.lab_flash", variant("16.lab_flash", *edits))
    assert result.status == "fail" and message in result.feedback
    assert dataclasses.is_dataclass(get_question("16.lab_flash").kind)
