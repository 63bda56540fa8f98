"""Partial credit over the hidden cases: a code answer right on some of its student's hidden
cases earns that share of the question's points (cases right / cases). The share is counted in
the one judging run its verdict comes from (gemmlab.judging.verdict.tallied): a function, a kernel
lab and a rank program alike, no case judged a second time."""
import csv
import json

import nbformat
import numpy as np
from nbformat.v4 import new_code_cell, new_notebook

from gemmlab.grading.bank import get_question
from gemmlab.labs.solutions import cell
from gemmlab_grader import feedback, grade, gradescope, isolate, secret
from gemmlab_grader.__main__ import main as grade_command
from gemmlab_grader.grade import case_seed, grade_notebook
from test_gemmlab_grader_grade import FAST

# right when the row is even, off by one when it is odd
HALF = "def row_major_index(r, c, rows, cols):\n    return r * cols + c + r % 2"
Q = "02.row_major_index"

# lesson 05's naive kernel with N taken from A's rows: right only where M == N (the first hidden
# case is square; the two ragged ones are not)
SET_UP = "import gemmlab as gl\nfrom numba import float32\ncuda = gl.device.cuda()"
SQUARE_ONLY = ("TILE = 16\n\n\n@cuda.jit\ndef lab_naive(A, B, C):\n    M, K = A.shape\n"
               "    N = A.shape[0]\n    row = cuda.blockIdx.y * TILE + cuda.threadIdx.y\n"
               "    col = cuda.blockIdx.x * TILE + cuda.threadIdx.x\n    if row < M and col < N:\n"
               "        acc = float32(0)\n        for k in range(K):\n"
               "            acc += A[row, k] * B[k, col]\n        C[row, col] = acc\n")
LAB = "05.lab_naive"


def _judged_once(monkeypatch):
    """The code questions judge_code is called for, in order (each must appear once)."""
    calls, real = [], grade.judge_code

    def counted(question_id, *args, **kwargs):
        calls.append(question_id)
        return real(question_id, *args, **kwargs)
    monkeypatch.setattr(grade, "judge_code", counted)
    return calls


def test_a_function_right_on_some_hidden_cases_earns_that_share_of_its_points(tmp_path,
                                                                              monkeypatch):
    calls = _judged_once(monkeypatch)
    nbformat.write(new_notebook(cells=[new_code_cell(HALF)]), tmp_path / "02_gemm.ipynb")
    graded = grade_notebook(tmp_path / "02_gemm.ipynb", settings=FAST)
    q = get_question(Q)
    cases = q.kind.hidden(np.random.default_rng(case_seed(FAST.seed.to_bytes(8, "big"),
                                                          "student", Q)))
    right = sum(r % 2 == 0 for r, _, _, _ in cases)
    assert 0 < right < len(cases), cases                  # the seed gives a mix to test on
    assert graded.results[Q] == "fail"
    assert graded.credit[Q] == right / len(cases)
    assert graded.earned(Q) == round(q.points * right / len(cases), 2)
    assert f"Partial credit: {right} of {len(cases)} hidden cases right." in graded.feedback[Q]
    assert calls.count(Q) == 1                            # one run, no second run per case


def test_a_function_wrong_on_every_case_earns_nothing(tmp_path):
    wrong = "def row_major_index(r, c, rows, cols):\n    return -1"
    nbformat.write(new_notebook(cells=[new_code_cell(wrong)]), tmp_path / "02_gemm.ipynb")
    graded = grade_notebook(tmp_path / "02_gemm.ipynb", settings=FAST)
    assert graded.results[Q] == "fail" and Q not in graded.credit and graded.earned(Q) == 0


def test_a_rank_program_right_on_even_rank_counts_gets_its_tally_from_one_run():
    # the hidden cases of the ring are 1 to 8 ranks, each once: the even half is right
    source, name, _ = cell("07.lab_ring", name="ring_allreduce")
    odd_off = source.replace("    return np.concatenate(chunks)\n",
                             "    return np.concatenate(chunks) + n % 2\n")
    assert odd_off != source
    result = isolate.judge_code("07.lab_ring", odd_off, name, seed=5, timeout=240)
    assert result.status == "fail" and result.cases == (4, 8), result.feedback
    assert "on 1 rank" in result.feedback or "ranks" in result.feedback
    honest = isolate.judge_code("07.lab_ring", source, name, seed=5, timeout=240)
    assert honest.status == "pass" and honest.cases == (8, 8)


def test_a_kernel_lab_right_on_some_hidden_cases_shows_its_share_in_every_report(
        tmp_path, monkeypatch):
    """The instructor grades a class of one whose lesson-05 kernel is right on the square hidden
    case only: the student's feedback, the Canvas gradebook and Gradescope's results.json (made
    from grades.json as run_autograder makes it) all give the lab cases right / cases of its
    points."""
    calls = _judged_once(monkeypatch)
    subs, out = tmp_path / "subs", tmp_path / "out"
    (subs / "ada").mkdir(parents=True)
    nbformat.write(new_notebook(cells=[new_code_cell(SET_UP), new_code_cell(SQUARE_ONLY)]),
                   subs / "ada" / "05_tiled_gemm.ipynb")
    seed = 11
    assert grade_command([str(subs), "--out", str(out), "--seed", str(seed), "--jobs", "1",
                          "--timeout", "240"] + ([] if FAST.sandbox else ["--trusted"])) == 0
    shapes = get_question(LAB).kind.cases(np.random.default_rng(case_seed(secret.new(seed),
                                                                           "ada", LAB)))
    right, total = sum(c.M == c.N for c in shapes), len(shapes)
    assert 0 < right < total, [(c.M, c.N, c.K) for c in shapes]
    worth = get_question(LAB).points
    share = round(worth * right / total, 2)
    assert calls.count(LAB) == 1

    mine = (out / feedback.FOLDER / f"{feedback.file_stem('ada')}.txt").read_text()
    assert f"  {LAB}: fail ({share:g}/{worth} points)" in mine
    assert f"Partial credit: {right} of {total} hidden cases right." in mine

    rows = list(csv.reader((out / "gradebook-canvas.csv").open(newline="")))
    column = rows[0].index("gemmlab lesson 05")
    assert rows[1][0] == "Points Possible"
    assert [r[column] for r in rows[2:] if r[0] == "ada"] == [f"{share:g}"]  # nothing else earned

    results = gradescope.results(json.loads((out / "grades.json").read_text()))
    test = next(t for t in results["tests"] if t["name"] == LAB)
    assert test["score"] == share and test["max_score"] == worth and test["status"] == "failed"
    assert f"Partial credit: {right} of {total} hidden cases right." in test["output"]
    assert results["score"] == share
