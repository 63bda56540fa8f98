"""The refusal of a cell's source (gemmlab.judging.allow.refused, what the judging of a cell
calls before it loads anything) and the graded run: an answer loaded under its question's
declaration in the grader's worker, so that what the allow-list cannot see on the source (a
vectorised expression on the stand-ins) still fails there, naming the rule."""
import pytest

from gemmlab.grading.bank import questions
from gemmlab.judging.allow import AllowError, refused
from gemmlab.judging.source import load_function
from gemmlab.labs.solutions import cell
from gemmlab_grader.isolate import judge_code

CODE = sorted(qid for qid, q in questions().items() if q.is_code)


@pytest.mark.parametrize("qid", CODE)
def test_every_code_question_states_what_it_allows_in_its_prompt(qid):
    q = questions()[qid]
    assert q.rules is q.allows and q.allows.sentence() in q.prompt


@pytest.mark.parametrize("source, words", [
    ("def naive_matmul(A, B):\n    return A @ B\n", "uses @"),
    ("def naive_matmul(A, B):\n    C = np.zeros((2, 2))\n    C @= B\n    return C\n", "uses @"),
    ("from numpy import einsum as e\ndef naive_matmul(A, B):\n    return e('ij,jk', A, B)\n",
     "imports numpy.einsum"),
    ("import numpy\ndef naive_matmul(A, B):\n    return numpy.matmul(A, B)\n", "imports numpy"),
    ("from gemmlab.grading.bank import get_question\n", "imports gemmlab.grading.bank"),
    ("def naive_matmul(A, B):\n    return A.__matmul__(B)\n", "reaches .__matmul__"),
])
def test_a_broken_rule_is_named_with_its_line(source, words):
    message = refused(questions()["02.naive_matmul"].rules, source)
    assert message is not None and words in message and "line " in message, message


def test_graded_naive_matmul_refuses_what_the_source_check_cannot_see():
    """A match pattern (an attribute named in a string) and a broadcast pass the check of the
    source; in the grader's answer runtime they meet the question's stand-ins and fail naming
    the rule. The course's answer and an honest comprehension pass."""
    loops = ("    for i in range(1):\n        for j in range(1):\n            for k in range(1):\n"
             "                pass\n")
    for body, words in (("match A:\n        case object(dot=d):\n            return d(B)",
                         "'dot' on an array is not allowed"),
                        ("return (A[:, :, None] * B[None]).sum(1)", "one element at a time")):
        sneaky = f"def naive_matmul(A, B):\n{loops}    {body}\n"
        assert refused(questions()["02.naive_matmul"].rules, sneaky) is None
        result = judge_code("02.naive_matmul", sneaky, "naive_matmul", seed=2, timeout=240)
        assert result.status == "fail" and words in result.feedback, result.feedback
    honest = ("def naive_matmul(A, B):\n    n, m, K = len(A), B.shape[1], len(B)\n"
              "    return np.zeros((0, 0)) if n == 0 else [[sum(A[i][k] * B[k][j] for k in "
              "range(K)) for j in range(m)] for i in range(n)]\n")
    assert judge_code("02.naive_matmul", honest, "naive_matmul", seed=2, timeout=240).status \
        == "pass"
    source, name, _ = cell("02.naive_matmul", name="naive_matmul")
    assert judge_code("02.naive_matmul", source, name, seed=2, timeout=240).status == "pass"


def test_graded_row_partials_cannot_bring_back_what_it_is_not_given():
    fresh = ("import sys\ndel sys.modules['gemmlab.parallel']\nimport gemmlab.parallel\n"
             "def row_partials(X, W, p):\n    return gemmlab.parallel.row_parallel(X, W, p)\n")
    result = judge_code("06.row_partials", fresh, "row_partials", seed=2, timeout=240)
    assert result.status == "fail" and "imports sys" in result.feedback, result.feedback
    library = "def row_partials(X, W, p):\n    return gl.parallel.row_parallel(X, W, p)\n"
    result = judge_code("06.row_partials", library, "row_partials", seed=2, timeout=240)
    assert result.status == "fail" and "gl.parallel is not allowed" in result.feedback


def test_the_tensor_core_lab_grants_its_fragments_not_the_package_s_gemms():
    """12.lab_wmma grants `from gemmlab.labs import wmma`: the course's fragment loop passes the
    graded run, a call of the package's emulation fails naming the rule where the cell is loaded
    under its declaration, and a graded mma_step's library call fails naming it."""
    q = questions()["12.lab_wmma"]
    source, name, _ = cell("12.lab_wmma")
    assert judge_code("12.lab_wmma", source, name, seed=2, timeout=240).status == "pass"
    cheat = "def lab_wmma(A, B, C):\n    C[:] = gl.tensorcore.emulate(A, B)\n"
    with pytest.raises(AllowError, match="gl.tensorcore is not allowed"):
        load_function(cheat, "lab_wmma", allows=q.allows)(None, None, None)
    step = "def mma_step(a, b, c):\n    return gl.tensorcore.mma(a, b, c)\n"
    result = judge_code("12.mma_step", step, "mma_step", seed=2, timeout=240)
    assert result.status == "fail" and "gl.tensorcore is not allowed" in result.feedback
