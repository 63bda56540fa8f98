"""Partial credit for a function over the hidden cases: right on some of its student's hidden
cases, it earns that share of the question's points (cases right / cases), each case judged
alone in a worker of its own, on the very cases its verdict was drawn on."""
import numpy as np
import nbformat
from nbformat.v4 import new_code_cell, new_notebook

from gemmlab.grading.bank import get_question
from gemmlab_grader.grade import case_seed, grade_notebook
from test_gemmlab_grader_grade import FAST

# right when the row is even, off by one when it is odd
HALF = "def row_major_index(r, c, rows, cols):\n    return r * cols + c + r % 2"
Q = "02.row_major_index"


def test_a_function_right_on_some_hidden_cases_earns_that_share_of_its_points(tmp_path):
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


def test_a_function_wrong_on_every_case_earns_nothing(tmp_path):
    wrong = "def row_major_index(r, c, rows, cols):\n    return -1"
    nbformat.write(new_notebook(cells=[new_code_cell(wrong)]), tmp_path / "02_gemm.ipynb")
    graded = grade_notebook(tmp_path / "02_gemm.ipynb", settings=FAST)
    assert graded.results[Q] == "fail" and Q not in graded.credit and graded.earned(Q) == 0
