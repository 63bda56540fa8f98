"""The warm-up puzzles of lesson 03 (gemmlab/labs/puzzles.py and puzzle_feedback.py): each
solution passes its public and hidden cases, each typical mistake fails with its name, the
skeletons are not attempted, and a puzzle is judged in the grader's worker like any kernel lab.

Most broken kernels are the solution kernel of solutions/03 with one small edit."""
import dataclasses

import numpy as np
import pytest

import gemmlab as gl
from gemmlab.grading import judge
from gemmlab.grading.bank import get_question
from gemmlab.labs import puzzles
from gemmlab.labs.solutions import cell, solution
from gemmlab.judging.cell import judge_alone
from solution_variants import variant

pytestmark = pytest.mark.skipif(gl.device.backend() != "sim",
                                reason="the instrumented simulator runs on the simulator backend")
PUZZLES = [f"03.{name}" for name in puzzles.PUZZLES]


def verdict(qid, kernel, **changes):
    return dataclasses.replace(get_question(qid).kind, **changes).verdict(kernel)


@pytest.mark.parametrize("qid", PUZZLES)
def test_the_solution_passes_the_public_and_hidden_cases(qid):
    kind = get_question(qid).kind
    status, text = kind.verdict(solution(qid))
    assert status == "pass", text
    for seed in (1, 2024):
        status, text = kind.verdict(solution(qid), np.random.default_rng(seed))
        assert status == "pass", text


@pytest.mark.parametrize("qid", PUZZLES)
def test_the_skeleton_students_get_is_not_attempted(qid):
    result = judge(qid, solution(qid, folder="exercises"))
    assert result.status == "not attempted", result.feedback


def test_hidden_sizes_are_never_whole_blocks_and_include_a_square_2d_case():
    rng = np.random.default_rng(7)
    for _ in range(20):
        assert all(n % 32 for (n,) in puzzles.MAP.hidden_sizes(rng))
        shapes = puzzles.MAP2D.hidden_sizes(rng)
        assert shapes[0][0] == shapes[0][1] and all(r % 16 and c % 16 for r, c in shapes)
        assert all(r != c for r, c in shapes[1:])
        assert all(1 <= n <= 256 for (n,) in puzzles.DOT.hidden_sizes(rng))


# Issue 54's attack on 03.puzzle_dot: every thread adds its product into one shared slot with
# cuda.atomic.add, 256 atomics in a row on one address where a tree takes 8 steps; it passed.
# benchmarks/lab_attacks_gpu.py runs it on a GPU.
ATOMICS_ON_ONE_SLOT = [
    ("    if t < a.shape[0]:\n        s[t] = a[t] * b[t]\n    else:\n        s[t] = 0\n    cuda.syncthreads()\n"
     "    stride = 128\n    while stride > 0:               # 128 additions, then 64, ..., then 1: the tree's 8 levels\n"
     "        if t < stride:\n            s[t] += s[t + stride]\n        cuda.syncthreads()\n        stride //= 2\n",
     "    if t == 0:\n        s[0] = 0\n    cuda.syncthreads()\n    if t < a.shape[0]:\n"
     "        cuda.atomic.add(s, 0, a[t] * b[t])\n    cuda.syncthreads()\n")]

BROKEN = [
    # (id, question, edits, words the feedback must contain)
    ("no guard", "03.puzzle_map",
     [("    if i < a.shape[0]:\n        out[i] = a[i] + 10", "    out[i] = a[i] + 10")],
     ["no guard", "thread 6 of block 2 read a[70]", "`if i < n:`"]),
    ("missing block offset", "03.puzzle_map",
     [("i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x", "i = cuda.threadIdx.x")],
     ["a missing block offset", "i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x"]),
    ("zip without guard", "03.puzzle_zip",
     [("    if i < a.shape[0]:\n        out[i] = a[i] + b[i]", "    out[i] = a[i] + b[i]")],
     ["no guard", "thread 6 of block 2 read a[70]"]),
    ("zip's missing block offset", "03.puzzle_zip",
     [("i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x", "i = cuda.threadIdx.x")],
     ["a missing block offset"]),
    ("rows and columns swapped", "03.puzzle_map2d",
     [("i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y", "i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x"),
      ("j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x", "j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y")],
     ["rows and columns swapped", "threadIdx.x runs along the columns"]),
    ("rows and columns swapped, guards kept", "03.puzzle_map2d",
     [("i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y", "i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x"),
      ("j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x", "j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y"),
      ("if i < a.shape[0] and j < a.shape[1]:", "if j < a.shape[0] and i < a.shape[1]:")],
     ["rows and columns swapped", "threadIdx.x runs along the columns"]),
    ("map2d without guard", "03.puzzle_map2d",
     [("    if i < a.shape[0] and j < a.shape[1]:\n        out[i, j] = a[i, j] + 10", "    out[i, j] = a[i, j] + 10")],
     ["no guard", "`if i < rows and j < cols:`"]),
    ("transposed store", "03.puzzle_map2d",
     [("        out[i, j] = a[i, j] + 10", "        out[j, i] = a[i, j] + 10")],
     ["a transposed store"]),
    ("map2d's missing block offset", "03.puzzle_map2d",
     [("i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y", "i = cuda.threadIdx.y"),
      ("j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x", "j = cuda.threadIdx.x")],
     ["a missing block offset"]),
    ("wrong axis broadcast", "03.puzzle_broadcast",
     [("        out[i, j] = a[i] + b[j]", "        out[i, j] = a[j] + b[i]")],
     ["the wrong axis broadcast"]),
    ("broadcast's guard on the wrong arrays", "03.puzzle_broadcast",
     [("if i < a.shape[0] and j < b.shape[0]:", "if i < b.shape[0] and j < a.shape[0]:")],
     ["no guard", "outside the 19 array a"]),  # which thread meets it first: the schedule's
    ("missing barrier", "03.puzzle_shared",
     [("    cuda.syncthreads()              # every slot is written before anyone reads a neighbour's\n", "")],
     ["a missing barrier", "thread 0 of block 0 read s[1]"]),
    ("neighbour read before it is written", "03.puzzle_shared",
     [("    cuda.syncthreads()              # every slot is written before anyone reads a neighbour's\n"
       "    if i < a.shape[0]:\n        out[i] = s[t] + s[(t + 1) % 32]",
       "    right = s[(t + 1) % 32]\n    cuda.syncthreads()\n    if i < a.shape[0]:\n        out[i] = s[t] + right")],
     ["a neighbour's slot read before it is written"]),
    ("no zero past the end", "03.puzzle_shared",
     [("    if i < a.shape[0]:\n        s[t] = a[i]\n    else:\n        s[t] = 0\n", "    if i < a.shape[0]:\n        s[t] = a[i]\n")],
     ["a slot nobody wrote", "store 0 into the slots past the end"]),
    ("neighbour from global memory", "03.puzzle_shared",
     [("out[i] = s[t] + s[(t + 1) % 32]", "out[i] = s[t] + (a[i + 1] if t < 31 and i + 1 < a.shape[0] else s[(t + 1) % 32])")],
     ["too many global reads", "a was read"]),
    ("no wrap-around", "03.puzzle_shared",
     [("out[i] = s[t] + s[(t + 1) % 32]", "out[i] = s[t] + s[t + 1]")],
     ["a slot outside the shared array", "(t + 1) % 32"]),
    ("pool from global memory", "03.puzzle_pool",
     [("        out[i] = s[t] + s[t + 1] + s[t + 2]", "        out[i] = a[i] + (a[i - 1] if i >= 1 else 0) + (a[i - 2] if i >= 2 else 0)")],
     ["too many global reads"]),
    ("a term before the start", "03.puzzle_pool",
     [("        if i - 2 >= 0:\n            s[t] = a[i - 2]\n        else:\n            s[t] = 0\n", "        s[t] = a[i - 2]\n")],
     ["a term before the start", "a[-2]"]),
    ("no halo", "03.puzzle_pool",
     [("    if t < 2:                       # two threads also load the halo\n        if i - 2 >= 0:\n            s[t] = a[i - 2]\n        else:\n            s[t] = 0\n", "")],
     ["a slot nobody wrote", "the halo"]),
    ("pool's missing barrier", "03.puzzle_pool",
     [("    cuda.syncthreads()\n", "")],
     ["a missing barrier"]),
    ("missing barrier between levels", "03.puzzle_dot",
     [("            s[t] += s[t + stride]\n        cuda.syncthreads()\n", "            s[t] += s[t + stride]\n")],
     ["a missing barrier", "each step of the tree must finish"]),
    ("dot without guard", "03.puzzle_dot",
     [("    if t < a.shape[0]:\n        s[t] = a[t] * b[t]\n    else:\n        s[t] = 0\n", "    s[t] = a[t] * b[t]\n")],
     ["no guard", "the block has 256 threads"]),
    ("everyone writes the result", "03.puzzle_dot",
     [("    if t == 0:\n        out[0] = s[0]", "    out[0] = s[0]")],
     ["out[0] was written 256 times", "let one thread"]),
    ("a serial loop", "03.puzzle_dot",
     [("    stride = 128\n    while stride > 0:               # 128 additions, then 64, ..., then 1: the tree's 8 levels\n"
       "        if t < stride:\n            s[t] += s[t + stride]\n        cuda.syncthreads()\n        stride //= 2\n"
       "    if t == 0:\n        out[0] = s[0]",
       "    if t == 0:\n        acc = float32(0)\n        for k in range(a.shape[0]):\n            acc += s[k]\n        out[0] = acc")],
     ["a serial loop", "thread 0 of block 0 read 202 values"]),
    ("thread 0 sums from global memory", "03.puzzle_dot",
     [("    if t < a.shape[0]:\n        s[t] = a[t] * b[t]\n    else:\n        s[t] = 0\n    cuda.syncthreads()\n"
       "    stride = 128\n    while stride > 0:               # 128 additions, then 64, ..., then 1: the tree's 8 levels\n"
       "        if t < stride:\n            s[t] += s[t + stride]\n        cuda.syncthreads()\n        stride //= 2\n"
       "    if t == 0:\n        out[0] = s[0]",
       "    if t == 0:\n        acc = float32(0)\n        for k in range(a.shape[0]):\n            acc += a[k] * b[k]\n        out[0] = acc")],
     ["a serial loop", "thread 0 of block 0 read 400 values (global and shared memory together)",
      "A parallel version takes log n steps"]),
    ("atomics on one slot", "03.puzzle_dot", ATOMICS_ON_ONE_SLOT,
     ["a serial chain of 200 atomics on one address"]),
    ("in-place scan race", "03.puzzle_prefix",
     [("        x = s[t]\n        if t >= d:\n            x += s[t - d]\n        cuda.syncthreads()          # every thread has read this step's values ...\n"
       "        s[t] = x\n",
       "        if t >= d:\n            s[t] += s[t - d]\n")],
     ["an in-place scan's race", "two buffers"]),
    ("exclusive scan", "03.puzzle_prefix",
     [("        out[t] = s[t]", "        out[t] = s[t] - a[t]")],
     ["an exclusive scan"]),
    ("prefix's missing barrier", "03.puzzle_prefix",
     [("        cuda.syncthreads()          # every thread has read this step's values ...\n", "")],
     ["an in-place scan's race"]),
]


@pytest.mark.parametrize("qid,edits,words", [b[1:] for b in BROKEN], ids=[b[0] for b in BROKEN])
def test_each_typical_mistake_fails_with_its_name(qid, edits, words):
    status, text = verdict(qid, variant(qid, *edits))
    assert status == "fail", text
    for word in words:
        assert word in text, text


def test_swapped_rows_and_columns_past_the_edge_are_named_at_the_access():
    kernel = variant("03.puzzle_map2d",
                     ("i = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y",
                      "i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x"),
                     ("j = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x",
                      "j = cuda.blockIdx.y * cuda.blockDim.y + cuda.threadIdx.y"),
                     ("if i < a.shape[0] and j < a.shape[1]:", "if j < a.shape[0] and i < a.shape[1]:"))
    status, text = verdict("03.puzzle_map2d", kernel, sizes=((19, 35),))
    assert status == "fail"
    assert "rows and columns swapped: thread (3,0) of block (1,0) read a[19, 0]" in text, text
    assert "but it indexed [19, 0]" in text


def test_the_wrong_axis_is_named_at_the_access_when_rows_and_columns_differ():
    kernel = variant("03.puzzle_broadcast", ("        out[i, j] = a[i] + b[j]", "        out[i, j] = a[j] + b[i]"),
                     ("if i < a.shape[0] and j < b.shape[0]:", "if i < out.shape[0] and j < out.shape[1]:"))
    status, text = verdict("03.puzzle_broadcast", kernel, sizes=((19, 35),))
    assert status == "fail" and text.startswith("at rows x cols = 19 x 35: the wrong axis broadcast")
    assert "indexed a with its column" in text, text


def test_a_dot_product_outside_the_float32_bound_fails_and_says_so():
    kernel = variant("03.puzzle_dot", ("        out[0] = s[0]", "        out[0] = s[0] * 1.001"))
    status, text = verdict("03.puzzle_dot", kernel)
    assert status == "fail" and "within lesson 01's float32 summation bound" in text, text


def test_a_puzzle_is_judged_in_the_graders_worker_like_any_kernel_lab():
    from gemmlab_grader.isolate import judge_code
    source, name, _ = cell("03.puzzle_shared")
    attack = ("import sys\nsys.modules['gemmlab.labs.puzzle_feedback'].first_problem = "
              "lambda *a: None\n" + source.replace(BARRIER_LINE, ""))
    result = judge_code("03.puzzle_shared", attack, name, seed=5)     # refused before it runs
    assert result.status == "fail" and "imports sys" in result.feedback, result.feedback
    result = judge_code("03.puzzle_shared", source, name, seed=5)
    assert result.status == "pass", result.feedback
    racy = source.replace(BARRIER_LINE, "")
    result = judge_code("03.puzzle_shared", racy, name, seed=5)
    assert result.status == "fail" and "a missing barrier" in result.feedback


def test_a_puzzles_check_in_a_fresh_process_sends_its_picture_back_as_plain_data():
    source, name, _ = cell("03.puzzle_shared")
    q = get_question("03.puzzle_shared")
    status, feedback, picture = judge_alone(q, source.replace(BARRIER_LINE, ""), name,
                                            picture=True)
    assert status == "fail" and "a missing barrier" in feedback
    assert picture["lab"] == "puzzle_shared" and picture["case"] == "n = 70"
    assert picture["race"]["threads"] == [0, 1] and picture["race"]["array"] == "s"


def test_a_check_asked_for_no_picture_brings_none_back_and_says_the_same(monkeypatch):
    """A grade draws no picture: every run's reply leaves out the block's accesses (most of a
    run's data, all decoded in the grader's one process), and the verdict reads the same."""
    from gemmlab.labs import kernel_lab
    pictures, real = [], kernel_lab.Observed
    monkeypatch.setattr(kernel_lab, "Observed",
                        lambda data: pictures.append(data["picture"]) or real(data))
    source, name, _ = cell("03.puzzle_shared")
    q = get_question("03.puzzle_shared")
    drawn = judge_alone(q, source, name, picture=True)
    assert len(pictures) > 1 and all(p["accesses"]["thread"] for p in pictures)
    pictures.clear()
    assert judge_alone(q, source, name) == drawn[:2]
    assert len(pictures) > 1 and all(p is None for p in pictures), pictures


BARRIER_LINE = ("    cuda.syncthreads()              # every slot is written before anyone reads a "
                "neighbour's\n")
