"""What a code answer may not call: stated in every code question's prompt, refused on the source
(aliases resolved), and out of reach while the code runs (a name reached by getattr)."""
import numpy as np
import pytest

from gemmlab.grading.bank import questions
from gemmlab.judging.rules import MACHINERY, Rules, RuleError, broken, out_of_reach
from gemmlab_grader.isolate import judge_code

CODE = sorted(qid for qid, q in questions().items() if q.is_code)


@pytest.mark.parametrize("qid", CODE)
def test_every_code_question_states_its_rules_in_its_prompt(qid):
    q = questions()[qid]
    assert q.rules is not None and q.rules.sentence() in q.prompt
    assert set(MACHINERY) <= set(q.rules.forbidden())


@pytest.mark.parametrize("source, words", [
    ("def naive_matmul(A, B):\n    return A @ B\n", "uses @ (line 2"),
    ("def naive_matmul(A, B):\n    C = np.zeros((2, 2))\n    C @= B\n    return C\n", "uses @="),
    ("def naive_matmul(A, B):\n    return A.dot(B)\n", "uses .dot"),
    ("from numpy import einsum as e\ndef naive_matmul(A, B):\n    return e('ij,jk', A, B)\n",
     "np.einsum"),
    ("import numpy\ndef naive_matmul(A, B):\n    return numpy.matmul(A, B)\n", "np.matmul"),
    ("def naive_matmul(A, B):\n    return gl.kernels.cpu.naive_ijk(A, B)\n", "gl.kernels"),
    ("import base64\nexec(base64.b64decode(b'eD0x'))\n", "uses exec"),
    ("def naive_matmul(A, B):\n    return eval('A @ B')\n", "uses eval"),
    ("from gemmlab.grading.bank import get_question\n", "the course's checking code"),
])
def test_a_broken_rule_is_named_with_its_line(source, words):
    message = broken(questions()["02.naive_matmul"].rules, source)
    assert message is not None and words in message, message


def test_the_packages_own_implementation_is_refused_under_any_name():
    rules = questions()["03.amdahl_function"].rules
    for source in ("def amdahl_speedup(s, p):\n    return gl.perfmodel.amdahl(s, p)\n",
                   "from gemmlab.perfmodel.parallelism import amdahl as a\n"
                   "def amdahl_speedup(s, p):\n    return a(s, p)\n"):
        assert "package's own implementation" in broken(rules, source)
    assert broken(rules, "def amdahl_speedup(s, p):\n    return 1 / (s + (1 - s) / p)\n") is None


def test_what_the_source_check_cannot_see_is_out_of_reach_where_the_code_runs():
    """getattr with a computed name reaches np.dot past the source check; the graded run puts
    it out of reach, and the answer fails naming the rule. The honest loops pass."""
    sneaky = ("def naive_matmul(A, B):\n    f = getattr(np, 'd' + 'ot')\n"
              "    return f(np.asarray(A, float), np.asarray(B, float))\n")
    assert broken(questions()["02.naive_matmul"].rules, sneaky) is None
    result = judge_code("02.naive_matmul", sneaky, "naive_matmul", seed=2, timeout=240)
    assert result.status == "fail" and "RuleError" in result.feedback
    assert "np.dot is out of reach" in result.feedback
    honest = ("def naive_matmul(A, B):\n    n, m, K = len(A), len(B[0]), len(B)\n"
              "    return [[sum(A[i][k] * B[k][j] for k in range(K)) for j in range(m)] "
              "for i in range(n)]\n")
    assert judge_code("02.naive_matmul", honest, "naive_matmul", seed=2, timeout=240).status \
        == "pass"
    at = judge_code("02.naive_matmul", "def naive_matmul(A, B):\n    return A @ B\n",
                    "naive_matmul", seed=2, timeout=240)
    assert at.status == "fail" and "this question's rule is no @" in at.feedback


def test_out_of_reach_replaces_every_binding_of_the_object(monkeypatch):
    import gemmlab.perfmodel as perfmodel
    import gemmlab.perfmodel.parallelism as parallelism
    monkeypatch.setattr(perfmodel, "amdahl", perfmodel.amdahl)
    monkeypatch.setattr(parallelism, "amdahl", parallelism.amdahl)
    out_of_reach(Rules(names=("gemmlab.perfmodel.amdahl",)))
    for module in (perfmodel, parallelism):
        with pytest.raises(RuleError, match="gl.perfmodel.amdahl is out of reach"):
            module.amdahl(0.1, 2)
    assert np.sum([1, 2]) == 3                       # what is not forbidden still works


def test_the_tensor_core_rule_forbids_the_package_s_gemms_not_what_the_lab_hands_out():
    """12.lab_wmma hands out gemmlab.labs.wmma, whose mma_sync calls gl.tensorcore.mma: the rule
    names the package's whole-GEMM emulations, so the honest fragment loop passes where the
    forbidden names are out of reach, and a call of the emulation fails naming the rule."""
    from gemmlab.labs.solutions import cell
    source, name, _ = cell("12.lab_wmma")
    assert judge_code("12.lab_wmma", source, name, seed=2, timeout=240).status == "pass"
    cheat = "def lab_wmma(A, B, C):\n    C[:] = gl.tensorcore.emulate(A, B)\n"
    assert "gl.tensorcore.emulate" in broken(questions()["12.lab_wmma"].rules, cheat)
    result = judge_code("12.lab_wmma", cheat, "lab_wmma", seed=2, timeout=240)
    assert result.status == "fail" and "gl.tensorcore.emulate" in result.feedback, result.feedback
    step = "def mma_step(a, b, c):\n    return gl.tensorcore.mma(a, b, c)\n"
    assert "gl.tensorcore.mma" in broken(questions()["12.mma_step"].rules, step)
