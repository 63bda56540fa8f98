"""A thread's local array starts undefined (issue 54, item 2): a read of an element the thread
never wrote is a fault that names the array, the element and the line, for floats (a NaN of a
payload of its own marks them) and integers (a mask of the written elements) alike; a kernel
that writes before it reads runs as before. Then the lab: 10.lab_outer without its accumulators
set to zero fails in check() and in the grader, naming the read."""
import re

import numpy as np
import pytest

import gemmlab as gl
from gemmlab.grading import check
from gemmlab.judging import load_function
from gemmlab.labs.local_arrays import UNDEFINED, FloatLocal, MaskedLocal, local_array
from solution_variants import edited

needs_sim = pytest.mark.skipif(gl.device.backend() != "sim",
                               reason="the instrumented simulator runs on the simulator backend")

KERNELS = '''from numba import cuda, float32, int32


@cuda.jit
def sums(a, out):
    acc = cuda.local.array(4, float32)
    for i in range(3):
        acc[i] = a[i]
    out[0] = acc[0] + acc[1] + acc[2] + acc[3]


@cuda.jit
def rows(a, out):
    acc = cuda.local.array((2, 3), float32)
    for j in range(3):
        acc[0][j] = a[j]
    out[0] = acc[0][2] + acc[1][1]


@cuda.jit
def counts(a, out):
    idx = cuda.local.array((2, 2), int32)
    idx[0, 0] = 1
    idx[0][1] = 2
    out[0] = idx[0, 0] + idx[0, 1] + idx[1][1]


@cuda.jit
def written_first(a, out):
    acc = cuda.local.array((2, 2), float32)
    idx = cuda.local.array(2, int32)
    for i in range(2):
        idx[i] = i
        for j in range(2):
            acc[i, j] = 0
    for i in range(2):
        acc[i][1] += a[idx[i]]
    out[0] = acc[0, 1] + acc[1, 1] + acc[1][0]
'''


def run(name):
    from gemmlab.labs.simulator import simulate
    kernel = load_function(KERNELS, name, "/nonexistent/locals.py")
    out = np.zeros(1, dtype=np.int32 if name == "counts" else np.float32)
    trace = simulate(kernel, 1, 1, [("a", np.arange(1, 5, dtype=np.float32)), ("out", out)])
    return trace.fault, out[0]


@needs_sim
@pytest.mark.parametrize("name, element, line", [
    ("sums", "acc[3]", "out[0] = acc[0] + acc[1] + acc[2] + acc[3]"),
    ("rows", "acc[1, 1]", "out[0] = acc[0][2] + acc[1][1]"),
    ("counts", "idx[1, 1]", "out[0] = idx[0, 0] + idx[0, 1] + idx[1][1]")])
def test_a_read_of_an_element_the_thread_never_wrote_is_a_fault_naming_it(name, element, line):
    fault, _ = run(name)
    assert fault is not None and fault.kind == "unwritten"
    said = str(fault)
    number = KERNELS.splitlines().index(f"    {line}") + 1
    assert f"thread 0 of block 0 read {element} at line {number} (`{line}`) before writing " \
           f"it" in said and "starts undefined on a GPU" in said


@needs_sim
def test_a_kernel_that_writes_before_it_reads_runs_as_before():
    assert run("written_first") == (None, 1 + 2)


def test_floats_start_as_the_undefined_nan_and_integers_with_an_empty_mask():
    reads = []
    floats = local_array(np.zeros(3, np.float32), lambda a, i: reads.append(i), None)
    assert type(floats) is FloatLocal and floats.view(np.uint32)[1] == UNDEFINED[floats.dtype]
    floats[0] = np.nan                          # a NaN the kernel made is no undefined read
    assert np.isnan(floats[0]) and reads == []
    floats[2]
    assert reads == [(2,)]
    ints = local_array(np.zeros((2, 2), np.int64), lambda a, i: reads.append(i), None)
    assert type(ints) is MaskedLocal and not ints.written.any()
    ints[1][0] = 7
    assert ints[1, 0] == 7 and reads == [(2,)]
    ints[0][1]
    assert reads == [(2,), (0, 1)]


NO_ZERO = ("            acc[i, j] = float32(0)\n", "            pass\n")


@needs_sim
def test_the_outer_product_lab_without_its_accumulators_zeroed_fails_naming_the_read():
    from gemmlab_grader.isolate import judge_code
    source, name, _ = edited("10.lab_outer", NO_ZERO)
    checked = check("10.lab_outer", load_function(source, name, "/nonexistent/nozero.py"))
    graded = judge_code("10.lab_outer", source, name, seed=3)
    for result in (checked, graded):
        assert result.status == "fail", result.feedback
        assert re.search(r"thread [\d(),]+ of block \(\d+,\d+\) read acc\[0, 0\] at line "
                         r"\d+ \(`acc\[i, j\] \+= a\[i\] \* b\[j\]`\) before writing it",
                         result.feedback), result.feedback
