"""A code answer sees only what its question allows (gemmlab.judging.allow): each attack of the
third hostile pass, and the classic escapes of a restricted namespace, refused naming the rule;
every code question of the bank refusing a library answer; the course's answers still loading."""
import sys
import time

import numpy as np
import pytest

from gemmlab.grading.bank import get_question, questions
from gemmlab.judging import runtime
from gemmlab.judging.allow import AllowError, namespace, refused
from gemmlab.judging.source import load_function
from gemmlab.labs.solutions import cell

CODE = sorted(qid for qid, q in questions().items() if q.is_code)
A, B = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)


def solution_source(qid):
    q = get_question(qid)
    source, name, _label = cell(qid, name=q.answer_name)
    return source, name


def load(qid, source, name=None):
    q = get_question(qid)
    return load_function(source, name or q.answer_name, f"<test {qid}>", allows=q.allows)


def refused_when_run(qid, source, *args, name=None):
    """The AllowError the answer meets, loading or called on ``args``."""
    with pytest.raises(AllowError) as caught:
        fn = load(qid, source, name)
        fn(*args)
    return str(caught.value)


def judged_naive_matmul(source):
    """(status, feedback) of 02.naive_matmul's answer ``source``, run in the answer runtime (its
    arrays the runtime's element-by-element stand-ins), on the public cases."""
    return runtime.judge(get_question("02.naive_matmul"), source, "naive_matmul")


@pytest.mark.parametrize("body, words", [
    ("return getattr(A, 'do' + 't')(B)", "getattr() is not allowed in this answer"),
    ("match A:\n        case object(dot=d):\n            return d(B)", "'dot' on an array"),
    ("return (A[:, :, None] * B[None]).sum(1)", "one element at a time"),
    ("return A.dot(B)", "'dot' on an array"),
    ("return np.matmul(A, B)", "np.matmul is not allowed"),
    ("return np.einsum('ik,kj->ij', A, B)", "np.einsum is not allowed"),
    ("return A @ B", "uses @"),
    ("C = np.zeros((2, 4))\n    C[0] = A[0]\n    return C", "one number into one element"),
    ("return [[sum(a * b for a, b in zip(A[i], B)) for i in range(2)]]", "iterating"),
    ("return np.shape(A) and np.asarray(A)", "np.asarray is not allowed"),
])
def test_naive_matmul_refuses_every_vectorised_answer_naming_the_rule(body, words):
    loops = "    for i in range(1):\n        for j in range(1):\n            for k in range(1):\n" \
            "                pass\n"        # the promised loops are there: the stand-ins refuse
    status, message = judged_naive_matmul(f"def naive_matmul(A, B):\n{loops}    {body}\n")
    assert status == "fail" and words in message, message


def test_naive_matmul_checks_the_three_loops_its_prompt_promises():
    two = ("def naive_matmul(A, B):\n    M, K = np.shape(A)\n    C = np.zeros((M, 4))\n"
           "    for i in range(M):\n        for j in range(4):\n"
           "            C[i, j] = A[i, 0] * B[0, j] + A[i, 1] * B[1, j] + A[i, 2] * B[2, j]\n"
           "    return C\n")
    status, message = judged_naive_matmul(two)
    assert "1 nested loop" in message or "2 nested loop" in message, message
    assert status == "fail" and "3 explicit nested loops" in message


def test_the_exercise_skeleton_is_unanswered_not_refused():
    source, name, _label = cell("02.naive_matmul", "exercises")
    assert judged_naive_matmul(source)[0] == "not attempted"


def test_the_course_answer_of_naive_matmul_runs_on_the_stand_ins():
    assert judged_naive_matmul(solution_source("02.naive_matmul")[0])[0] == "pass"


FRESH_IMPORT = ("import sys\ndel sys.modules['gemmlab.parallel']\nimport gemmlab.parallel\n"
                "def row_partials(X, W, p):\n    return gemmlab.parallel.row_parallel(X, W, p)\n")


@pytest.mark.parametrize("source, words", [
    (FRESH_IMPORT, "imports sys"),
    ("import gemmlab.parallel as P\ndef row_partials(X, W, p):\n    return P.row_parallel(X, W, p)\n",
     "imports gemmlab.parallel"),
    ("def row_partials(X, W, p):\n    return gl.parallel.row_parallel(X, W, p)\n",
     "gl.parallel is not allowed"),
    ("def row_partials(X, W, p):\n    m = __import__('gemmlab.parallel')\n    return m\n",
     "uses __import__"),
    ("def row_partials(X, W, p):\n    return ().__class__.__base__.__subclasses__()\n",
     "reaches .__subclasses__"),
    ("def row_partials(X, W, p):\n    return row_partials.__globals__\n", "reaches .__globals__"),
    ("import gc\ndef row_partials(X, W, p):\n    return gc.get_referrers(np)\n", "imports gc"),
    ("def row_partials(X, W, p):\n    g = (x for x in [1])\n    return g.gi_frame.f_back\n",
     "frames and code objects are not part of an answer"),
    ("def row_partials(X, W, p):\n    return '{0.__class__}'.format(X)\n", "calls .format"),
    ("def row_partials(X, W, p):\n    return eval('X @ W')\n", "eval() is not allowed"),
    ("def row_partials(X, W, p):\n    return exec('1')\n", "exec() is not allowed"),
    ("def row_partials(X, W, p):\n    return vars()\n", "vars() is not allowed"),
    ("def row_partials(X, W, p):\n    return globals()\n", "globals() is not allowed"),
    ("def row_partials(X, W, p):\n    return open('/etc/passwd').read()\n", "open() is not allowed"),
    ("def row_partials(X, W, p):\n    return __builtins__\n", "uses __builtins__"),
    ("def row_partials(X, W, p):\n    global np\n    np = 1\n", "declares global np"),
])
def test_the_escapes_of_a_restricted_namespace_are_refused_naming_the_rule(source, words):
    message = refused_when_run("06.row_partials", source, A, B.T[:3], 1)
    assert words in message, message


def test_a_fresh_import_of_what_is_forbidden_stays_out_of_reach():
    """Even after the package is dropped from sys.modules (here, in the judging process), the
    answer has no import to bring it back and no module to reach it through."""
    saved = sys.modules.pop("gemmlab.parallel")
    try:
        assert "imports sys" in refused_when_run("06.row_partials", FRESH_IMPORT, A, B, 1)
        reach = "def row_partials(X, W, p):\n    return gl.parallel.row_parallel(X, W, p)\n"
        assert "gl.parallel is not allowed" in refused_when_run("06.row_partials", reach, A, B, 1)
    finally:
        sys.modules["gemmlab.parallel"] = saved


def test_a_granted_import_gives_only_what_is_granted():
    """12.lab_wmma grants `from gemmlab.labs import wmma`: in the answer runtime it gives the
    fragment calls (done by the judge: here one fill, counted), and the packages on its way hold
    nothing else; another import is refused on the source, naming the rule."""
    q = get_question("12.lab_wmma")
    fine = "from gemmlab.labs import wmma\ndef lab_wmma(A, B, C):\n    return wmma.fill_fragment(0.0)\n"
    assert "0 calls of mma_sync, but the product needs 27" in runtime.judge(q, fine, "lab_wmma")[1]
    beside = ("from gemmlab.labs import wmma\ndef lab_wmma(A, B, C):\n    match wmma:\n"
              "        case object(kernel_lab=k):\n            pass\n")
    assert "wmma.kernel_lab is not allowed in this answer: this question hands out " \
           "gemmlab.labs.wmma.fill_fragment" in runtime.judge(q, beside, "lab_wmma")[1]
    other = "from gemmlab.labs import kernel_lab\ndef lab_wmma(A, B, C):\n    return 1\n"
    assert "imports gemmlab.labs.kernel_lab" in refused_when_run("12.lab_wmma", other)


LIBRARY_ANSWERS = ["np.einsum", "np.matmul", "np.dot", "np.linalg", "gl.kernels", "gl.parallel",
                   "gl.perfmodel", "gl.collectives", "gl.tensorcore", "gl.gemm", "gl.grading"]


@pytest.mark.parametrize("qid", CODE)
def test_every_code_question_refuses_a_library_answer(qid):
    """For each code question, the library calls it does not grant fail when the answer runs,
    and the granted ones are exactly those its declaration hands out."""
    q = get_question(qid)
    ns = namespace(q.allows)
    loops = "".join("    " * (d + 1) + f"for i{d} in range(1):\n" for d in range(q.allows.loops))
    loops += "    " * (q.allows.loops + 1) + "pass\n" if loops else ""   # what the prompt promises
    refusals = 0
    for path in LIBRARY_ANSWERS:
        module, attr = path.split(".")
        if attr in dir(ns[module]):
            continue
        source = f"def {q.answer_name}(*args):\n{loops}    return {path}(*args)\n"
        assert "is not allowed in this answer" in refused_when_run(qid, source, A, B)
        refusals += 1
    assert refusals >= len(LIBRARY_ANSWERS) - 3
    vectorised = f"import numpy\ndef {q.answer_name}(*args):\n    return numpy.matmul(*args)\n"
    assert "grants these imports only" in refused_when_run(qid, vectorised, A, B)


@pytest.mark.parametrize("qid", CODE)
def test_every_course_answer_passes_the_allow_list_and_loads(qid):
    q = get_question(qid)
    source, name = solution_source(qid)
    assert refused(q.allows, source, name) is None
    if q.id.startswith(("03.puzzle", "05.", "08.", "10.lab", "11.")):
        return          # a kernel: loading it builds a dispatcher, judged by its lab
    assert callable(load(qid, source, name))


@pytest.mark.parametrize("qid", ["03.puzzle_map", "03.puzzle_shared"])
def test_a_kernel_loaded_in_its_namespace_still_compiles_and_passes_its_lab(qid):
    """The kernel language is handed out as the module itself: the simulator and the compiler
    see the cuda they know, and the course's kernel passes its puzzle."""
    q = get_question(qid)
    source, name = solution_source(qid)
    assert q.kind.judge(q, load(qid, source, name))[0] == "pass"


def test_every_code_prompt_states_what_its_answer_may_use():
    for qid in CODE:
        q = get_question(qid)
        assert q.allows.sentence() in q.prompt


def test_building_a_namespace_costs_well_under_a_millisecond():
    allows = get_question("15.lab_budget").allows
    start = time.perf_counter()
    for _ in range(100):
        namespace(allows)
    assert (time.perf_counter() - start) / 100 < 1e-3
