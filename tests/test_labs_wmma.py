"""Lab 12: the fragment API, and each feedback message of 12.lab_wmma with the fragment loop it
is for (the solution with one edit), judged as check() judges a notebook cell: in the answer
runtime, where A, B, C and the fragments are handles and each fragment call is done by the judge
(issue 54); the attacks of tests/hostile/attack_wmma_* fail there and in a graded run."""
import dataclasses
import json
import linecache
import re
from pathlib import Path

import numpy as np
import pytest

from gemmlab.grading import judge
from gemmlab.grading.bank import get_question
from gemmlab.grading.checker import check, judge_alone_in_a_worker
from gemmlab.judging import load_function, runtime
from gemmlab.labs import wmma
from gemmlab.labs.solutions import cell, solution
from gemmlab_grader.isolate import judge_code
from sandboxed import SANDBOX, require_sandbox

QID = "12.lab_wmma"
HOSTILE = Path(__file__).resolve().parent / "hostile"


def checked(fn):
    """The verdict check() prints for ``fn``, a function of a notebook cell."""
    return judge_alone_in_a_worker(get_question(QID), fn)


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
     ["raised AllowError: C: C is only read and written through fragments", "at line"]),
    ("a fragment past the edge", [("for k in range(0, K, 16):", "for k in range(0, K + 16, 16):")],
     ["load_matrix_sync(A, 0, 48): the fragment's origin is outside A, which is 40 x 40"]),
    ("wrong values", [("b = wmma.load_matrix_sync(B, k, j)", "b = wmma.load_matrix_sync(B, j, k)")],
     ["B's fragment loaded at (j, k) instead of (k, j)", "rows k, columns j"]),   # named
]


@pytest.mark.parametrize("edits,words", [b[1:] for b in BROKEN], ids=[b[0] for b in BROKEN])
def test_each_mistake_fails_with_its_own_message(edits, words):
    result = checked(variant(*edits))
    assert result.status == "fail", result.feedback
    for word in words:
        assert word in result.feedback, result.feedback


def test_the_reference_passes_public_and_hidden_cases_and_the_skeleton_is_not_attempted():
    result = checked(solution(QID))
    assert result.status == "pass" and "27 MMA steps" not in result.feedback
    source, name, _ = cell(QID)
    status, text = runtime.judge(get_question(QID), source, name, np.random.default_rng(7))
    assert status == "pass", text
    assert checked(solution(QID, folder="exercises")).status == "not attempted"
    assert judge(QID, solution(QID)).status == "pass"     # a function here: judged here


def test_an_endless_loop_is_stopped():
    def spins(A, B, C):
        while True:
            pass
    status, text = dataclasses.replace(wmma.LAB, time_limit=0.5).verdict(spins)
    assert status == "fail" and "did not finish within 0.5 s" in text
    line = spins.__code__.co_firstlineno + 1
    assert re.search(rf"it was at line ({line}|{line + 1}) \(`(while True:|pass)`\)", text), text
    # in the runtime, the judge's deadline ends it
    source = "def lab_wmma(A, B, C):\n    while True:\n        pass\n"
    status, text = runtime.judge(get_question(QID), source, "lab_wmma", timeout=3)
    assert status == "fail" and "did not finish: no answer within 3 s" in text, text


@pytest.mark.parametrize("answer,words", [
    (solution("05.lab_naive"), "not a @cuda.jit kernel"),
    (lambda A, B: None, "takes 2 parameters"),
    ("lab_wmma", "expected a function"),
])
def test_what_is_not_a_fragment_loop_is_refused(answer, words):
    result = judge(QID, answer)
    assert result.status == "fail" and words in result.feedback


def _attack(folder):
    """The attack cell (the notebook's last) of a hostile notebook of lesson 12."""
    cells = json.loads((HOSTILE / folder / "12_tensor_cores.ipynb").read_text())["cells"]
    return "".join(cells[-1]["source"])


def _live(source):
    """``lab_wmma`` as a notebook cell defines it: its text in linecache under a file name that
    does not exist, as IPython keeps a cell."""
    filename = f"<ipython-input-{abs(hash(source))}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {}
    exec(compile(source, filename, "exec"), namespace)
    return namespace["lab_wmma"]


@pytest.mark.parametrize("folder, words", [
    ("attack_wmma_operand_data", "raised AllowError: A's 'data' is not reachable in this answer: "
                                 "A is only read and written through fragments"),
    ("attack_wmma_match_array", "raised AllowError: A's '_array' is not reachable in this answer"),
    ("attack_wmma_fragment_data", "raised AllowError: a fragment's 'data' is not reachable in this "
                                  "answer: a fragment's array stays with the judge"),
    ("attack_wmma_gc_walk", "C was never stored: C is written only by wmma.store_matrix_sync"),
])
def test_each_attack_on_the_fragments_fails_in_check_and_in_a_graded_run(folder, words, capsys):
    """Issue 54: these passed while the answer ran beside the matrices (the operands' and the
    fragments' arrays public or a pattern away, nothing checking that C came from stores of
    accumulators): C written from the arrays, the MMA count made on a throw-away fragment."""
    source = _attack(folder)
    checked_ = check(QID, _live(source))
    assert checked_.status == "fail" and words in checked_.feedback, checked_.feedback
    require_sandbox()
    graded = judge_code(QID, source, "lab_wmma", seed=5, timeout=240, isolation=SANDBOX)
    assert graded.status == "fail" and words in graded.feedback, graded.feedback


def test_the_gc_walk_finds_the_arrays_where_they_share_its_interpreter():
    """The walk of attack_wmma_gc_walk is no straw man: called beside arrays (as the answer ran
    before), it finds them and writes the product into C."""
    fn = load_function(_attack("attack_wmma_gc_walk"), "lab_wmma", "<the gc walk, here>")
    rng = np.random.default_rng(1)
    A = rng.uniform(-1, 1, (37, 53)).astype(np.float16)
    B = rng.uniform(-1, 1, (53, 29)).astype(np.float16)
    C = np.zeros((37, 29), np.float32)
    fn(A, B, C)
    assert np.allclose(C, A.astype(np.float32) @ B.astype(np.float32), atol=1e-3)


def test_the_gc_walk_finds_no_array_and_no_numpy_in_the_runtime(capsys):
    """What the walk of attack_wmma_gc_walk reaches in the answer runtime, said by the answer."""
    source = _attack("attack_wmma_gc_walk")
    source = source[:source.index("    by_shape")] + (
        "    raise RuntimeError(f\"{len(found)} arrays, NumPy loaded: {'numpy' in sys.modules}\")\n")
    result = check(QID, _live(source))
    assert "raised RuntimeError: 0 arrays, NumPy loaded: False" in result.feedback, result.feedback


def test_a_stored_fragment_must_come_from_the_mmas_of_its_tile():
    """Numbers right and the MMA count right are not enough: a function here (which can reach
    the matrices) that stores throw-away fragments and then writes C fails naming the store."""
    def lab(A, B, C):
        M, K = A.shape
        N = B.shape[1]
        a, b, junk = wmma.load_matrix_sync(A, 0, 0), wmma.load_matrix_sync(B, 0, 0), None
        for i in range(0, M, 16):
            for j in range(0, N, 16):
                junk = wmma.fill_fragment(0.0)
                for _ in range(0, K, 16):
                    junk = wmma.mma_sync(a, b, junk)
                wmma.store_matrix_sync(C, i, j, junk)
        C.array[:] = A.array.astype(np.float64) @ B.array.astype(np.float64)
    status, text = wmma.LAB.verdict(lab)
    assert status == "fail", text
    assert "the C fragment at (0, 0) was stored from an accumulator whose 3 MMA steps are not " \
           "A's fragments (0, k) times B's (k, 0) for each k" in text, text


def test_the_judge_refuses_what_only_a_forged_ask_could_send():
    """The runtime is the answer's: an ask it forges (an array of its own, a handle never made,
    a number used twice) is refused with the reason, and nothing after it is done."""
    A, B = np.ones((20, 20), np.float16), np.ones((20, 20), np.float16)
    for args, ref, says in [
            ([{"t": "array", "dtype": "<f4", "shape": [1, 1], "b64": "AACAPw=="}, 0, 0], 3,
             "take the lab's A, B, C"),
            ([{"t": "handle", "v": 99}, 0, 0], 3, "holds no fragment"),
            ([{"t": "handle", "v": 0}, {"t": "int", "v": "0"}, {"t": "int", "v": "0"}], 0,
             "a second call numbered 0")]:
        run = wmma.Fragments(A, B, np.zeros((20, 20), np.float32))
        run.answer({"call": "load_matrix_sync", "args": args, "kwargs": {}, "ref": ref,
                    "at": " at line 5"})
        assert says in run.refused and run.refused.endswith(" at line 5"), run.refused
        run.answer({"call": "fill_fragment", "args": [], "kwargs": {}, "ref": 7})
        assert 7 not in run.held and run.calls == 0
