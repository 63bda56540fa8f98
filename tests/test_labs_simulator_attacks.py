"""Attacks on the simulator's old blind spots (issue 35, items 2 and 3), each through check() and
through the grader (judge_code): two shared arrays on one line are two arrays; a scan through
global memory without a barrier is a race naming both threads and lines; a kernel ptxas refuses
fails however well it simulates; one thread summing a dot product from global memory is a serial
loop (issue 35, item 4). Then the simulator's own behaviour: fresh shared memory is
garbage (NaN), and a racy kernel's answer changes with the schedule while a race-free one's
does not."""
import numpy as np
import pytest

import gemmlab as gl
from gemmlab.grading import check
from gemmlab.judging import load_function
from gemmlab.labs.kernel_lab import schedule_of
from gemmlab.labs.simulator import simulate
from gemmlab.labs.solutions import cell
from gemmlab_grader.isolate import judge_code

pytestmark = pytest.mark.skipif(gl.device.backend() != "sim",
                                reason="the instrumented simulator runs on the simulator backend")
SHARED = "cuda.shared.array((TILE, TILE), float32)"


def tiled(*edits):
    source, name, _ = cell("05.lab_tiled")
    for old, new in edits:
        assert source.count(old) >= 1, old
        source = source.replace(old, new)
    return source, name


# (a) sA and sT declared on one line: the kernel fills sA and reads sT, which nobody wrote. When
# the simulator told shared arrays apart by their line, the two were one array and this passed.
ONE_LINE, ONE_LINE_NAME = tiled(
    (f"    sA = {SHARED}   # one shared array per line: the simulator\n",
     f"    sA, sT = {SHARED}, {SHARED}\n"),
    ("acc += sA[ty, k] * sB[k, tx]", "acc += sT[ty, k] * sB[k, tx]"))

# (b) the scan through global memory, each thread adding its input to its left neighbour's
# output, with no barrier between them (there is none across a block's global writes anyway).
GLOBAL_SCAN = '''@cuda.jit
def puzzle_prefix(a, out):
    """out[i] = a[0] + ... + a[i], n <= 256, one block of 256 threads."""
    t = cuda.threadIdx.x
    if t == 0:
        out[0] = a[0]
    elif t < a.shape[0]:
        out[t] = out[t - 1] + a[t]
'''

# (c) the tiled kernel with each 16 x 16 tile declared 256 x 256: right, but 512 KiB of static
# shared memory per block where a block may declare 48 KiB.
HUGE_TILES, HUGE_NAME = tiled((SHARED, "cuda.shared.array((256, 256), float32)"))

# (d) thread 0 computing the whole dot product from global memory: few reads of each input in
# all, no shared memory to count, but n steps of one thread where a tree takes log n.
SERIAL_DOT = '''@cuda.jit
def puzzle_dot(a, b, out):
    """out[0] = sum a[i] b[i], n <= 256, one block of 256 threads."""
    if cuda.threadIdx.x == 0:
        acc = float32(0)
        for k in range(a.shape[0]):
            acc += a[k] * b[k]
        out[0] = acc
'''

ATTACKS = [
    ("two shared arrays on one line", "05.lab_tiled", ONE_LINE, ONE_LINE_NAME,
     ["thread (0,0) of block (0,0) read sT[0, 0] at line 28 (`acc += sT[ty, k] * sB[k, tx]`)",
      "before any thread of the block had written it", "holds garbage"]),
    ("global-memory scan without a barrier", "03.puzzle_prefix", GLOBAL_SCAN, "puzzle_prefix",
     ["thread 1 of block 0 read out[0] at line 8 (`out[t] = out[t - 1] + a[t]`)",
      "in the same barrier interval in which thread 0 wrote it at line 6 (`out[0] = a[0]`)",
      "a race through global memory", "through shared memory, with cuda.syncthreads()"]),
    ("2 x 256 KiB of static shared memory", "05.lab_tiled", HUGE_TILES, HUGE_NAME,
     ["512 KiB of static shared memory", "at most 48 KiB", "sA = cuda.shared.array((256, 256)"]),
    ("thread 0 sums the dot product from global memory", "03.puzzle_dot", SERIAL_DOT,
     "puzzle_dot", ["a serial loop", "thread 0 of block 0 read", "A parallel version takes log n "
                    "steps"]),
]


@pytest.mark.parametrize("qid, source, name, words", [a[1:] for a in ATTACKS],
                         ids=[a[0] for a in ATTACKS])
def test_each_attack_fails_check_and_the_grader_naming_its_cause(qid, source, name, words):
    checked = check(qid, load_function(source, name, f"/nonexistent/{name}.py"))
    graded = judge_code(qid, source, name, seed=3)
    for result in (checked, graded):
        assert result.status == "fail", result.feedback
        for word in words:
            assert word in result.feedback, result.feedback


# -- the simulator's own behaviour ------------------------------------------------------------------

def kernel_of(source, name):
    return load_function(source, name, f"/nonexistent/{name}_sim.py")


FRESH_SHARED = '''@cuda.jit
def reads_fresh_shared(out):
    s = cuda.shared.array(32, float32)
    t = cuda.threadIdx.x
    out[t] = s[t]
'''


def test_fresh_shared_memory_is_nan_and_reading_it_is_flagged():
    out = np.zeros(32, np.float32)
    trace = simulate(kernel_of(FRESH_SHARED, "reads_fresh_shared"), (1,), (32,), [("out", out)])
    assert np.isnan(out).all()
    assert trace.uninitialized          # (the first few of its 32 reads are kept)
    assert trace.uninitialized[0][:4] == ("s", (0,), "thread 0", "block 0")


def scan_under(source, name, schedule, n=200):
    a = np.random.default_rng(7).uniform(-1, 1, n).astype(np.float32)
    out = np.full(n, 3.0, np.float32)
    trace = simulate(kernel_of(source, name), (1,), (256,), [("a", a), ("out", out)],
                     schedule=schedule)
    return out, trace


def test_a_racy_kernels_answer_changes_with_the_schedule_a_race_free_ones_does_not():
    forward, trace = scan_under(GLOBAL_SCAN, "puzzle_prefix", "forward")
    backward, _ = scan_under(GLOBAL_SCAN, "puzzle_prefix", "reversed")
    [race] = [r for r in trace.races if r.index == (0,)]
    assert (race.reader, race.writer, race.space) == ("thread 1", "thread 0", "global")
    assert not np.array_equal(forward, backward)
    reference = cell("03.puzzle_prefix")[:2]
    runs = [scan_under(*reference, schedule) for schedule in
            ("forward", "reversed", ["shuffled", 5], ["shuffled", 6])]
    for out, trace in runs:
        assert not trace.races and np.array_equal(out, runs[0][0])


def test_cases_rotate_forward_reversed_shuffled_and_a_grades_shuffle_comes_from_its_rng():
    assert [schedule_of(n) for n in range(4)] == ["forward", "reversed", ["shuffled", 2],
                                                  "forward"]
    drawn = {schedule_of(2, np.random.default_rng(seed))[1] for seed in range(5)}
    assert len(drawn) == 5


def test_a_kernel_cell_may_import_what_the_preamble_hands_out_and_nothing_more():
    """``from numba import cuda, float32`` and ``import math`` are the kernel language (granted);
    ``import numba`` whole is not: the grader's worker loads the cell as check() does."""
    source, name, _ = cell("05.lab_naive")
    imports = "from numba import cuda, float32\nimport math\n"
    assert judge_code("05.lab_naive", imports + source, name, seed=3).status == "pass"
    refused = judge_code("05.lab_naive", "import numba\n" + source, name, seed=3)
    assert refused.status == "fail" and "imports numba:" in refused.feedback, refused.feedback


HUGE_LOCAL = '''@cuda.jit
def lab_naive(A, B, C):
    t = cuda.local.array(1 << 30, float32)
    i, j = cuda.grid(2)
    if i < C.shape[0] and j < C.shape[1]:
        acc = 0.0
        for k in range(A.shape[1]):
            acc += A[i, k] * B[k, j]
        t[0] = acc
        C[i, j] = t[0]
'''


def test_an_array_no_gpu_could_hold_is_refused_before_it_is_made():
    # A check compiles while it simulates, so the simulator meets such a kernel before ptxas has
    # spoken: 4 GiB of NaN per thread would have taken the notebook (or the grader's worker) down.
    checked = check("05.lab_naive", kernel_of(HUGE_LOCAL, "lab_naive"))
    graded = judge_code("05.lab_naive", HUGE_LOCAL, "lab_naive", seed=3)
    for result in (checked, graded):
        assert result.status == "fail", result.feedback
        assert "an array of 4294967296 bytes: more than a GPU gives" in result.feedback
        assert "line 3 (`t = cuda.local.array(1 << 30, float32)`)" in result.feedback


CROSS_BLOCK = '''@cuda.jit
def puzzle_map(a, out):
    """out[i] = a[i] + 10."""
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < a.shape[0]:
        out[i] = a[i] + 10
        if i >= cuda.blockDim.x:
            out[i] = out[i - cuda.blockDim.x] - a[i - cuda.blockDim.x] + a[i]
'''


def test_a_read_of_another_blocks_global_write_is_a_race_no_barrier_can_fix():
    result = check("03.puzzle_map", load_function(CROSS_BLOCK, "puzzle_map", "/nonexistent/x.py"))
    assert result.status == "fail", result.feedback
    for words in ("a race through global memory", "in the same launch", "No barrier orders two "
                  "blocks", "cuda.atomic.add"):
        assert words in result.feedback, result.feedback


def test_a_gemm_lab_kernel_reading_a_neighbours_output_is_a_race_through_global_memory():
    source, name, _ = cell("05.lab_naive")
    store = "        C[row, col] = acc\n"
    assert source.count(store) == 1
    racy = source.replace(store, store + "        if col > 0:\n"
                                          "            C[row, col] = C[row, col - 1] * 0 + acc\n")
    result = check("05.lab_naive", load_function(racy, name, "/nonexistent/naive_race.py"))
    assert result.status == "fail", result.feedback
    for words in ("a race through global memory", "C[", "Hand values between threads through "
                  "shared memory"):
        assert words in result.feedback, result.feedback
