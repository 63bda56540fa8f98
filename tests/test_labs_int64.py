"""Integers as the GPU computes them (issue 54, item 2, first step): the simulator wraps a
kernel's integer arithmetic to int64 as numba's compiled kernel does, so a kernel that relies on
Python's unbounded integers fails on the simulator as it fails on every GPU. First the rewrite on
plain functions of this file (their source is what linecache holds), then kernels: the
05.lab_naive attack of issue 54 through check() and the grader, and a device function."""
import re

import numpy as np
import pytest

import gemmlab as gl
from gemmlab.grading import check
from gemmlab.judging import load_function
from gemmlab.labs.int64 import GLOBALS, INT64_MAX, INT64_MIN, as_int64, checks, gpu_integers, \
    rewritten
from gemmlab.labs.solutions import cell

needs_sim = pytest.mark.skipif(gl.device.backend() != "sim",
                               reason="the instrumented simulator runs on the simulator backend")


def times(x, y):
    return x * y


def plus(x, y):
    return x + y


def minus(x, y):
    return x - y


def negate(x):
    return -x


def shift(x, n):
    return x << n


def floor_div(x, y):
    return x // y


def mod(x, y):
    return x % y


def power_of(x, n):
    return x ** n


def accumulate(x, n):
    acc = x
    acc += n
    return acc


def literal_only():
    return 2**64 - -(1 << 70)


def in_an_element(a):
    a[0] += 1
    return a[0]


def as_gpu(fn, *args):
    """(what ``fn(*args)`` returns with int64 integers, the wraps found)."""
    found = []
    with gpu_integers([fn], found):
        return fn(*args), found


def test_products_sums_and_differences_wrap_at_2_to_the_63():
    assert as_gpu(times, 2**62, 2)[0] == INT64_MIN
    assert as_gpu(times, 3, 2**62)[0] == -(2**62)
    assert as_gpu(plus, INT64_MAX, 1)[0] == INT64_MIN
    assert as_gpu(minus, INT64_MIN, 1)[0] == INT64_MAX
    assert as_gpu(shift, 1, 63)[0] == INT64_MIN and as_gpu(shift, 1, 64)[0] == 0
    assert as_gpu(accumulate, INT64_MAX, 2)[0] == INT64_MIN + 1
    assert as_gpu(times, 3, 4) == (12, [])                  # in range: Python's value, no wrap


def test_unary_minus_of_int64_min_wraps_to_itself():
    assert as_gpu(negate, INT64_MIN)[0] == INT64_MIN
    assert as_gpu(negate, 5)[0] == -5


def test_floor_division_and_modulo_round_down_with_negative_operands_as_numba_does():
    # numba_cuda's int_divmod_signed takes C's truncating sdiv/srem and corrects them to the
    # floor: Python's rule. INT64_MIN // -1 overflows; numba returns 0 for it (and for %).
    assert [as_gpu(floor_div, x, y)[0] for x, y in ((-7, 2), (7, -2), (-7, -2))] == [-4, -4, 3]
    assert [as_gpu(mod, x, y)[0] for x, y in ((-7, 2), (7, -2), (-7, -2))] == [1, -1, -1]
    assert as_gpu(floor_div, INT64_MIN, -1)[0] == 0
    assert as_gpu(mod, INT64_MIN, -1)[0] == 0


def test_an_int_to_a_negative_power_is_numbas_int_and_a_big_power_wraps():
    assert as_gpu(power_of, 2, -1)[0] == 0          # Python: 0.5; numba's int ** int: int64
    assert as_gpu(power_of, -1, -3)[0] == -1
    assert as_gpu(power_of, 2, 63)[0] == INT64_MIN
    assert as_gpu(power_of, 2.0, -1)[0] == 0.5      # a float base keeps float arithmetic
    value, found = as_gpu(power_of, 3, -2)
    assert value == 0 and found[0].python == 3 ** -2 and found[0].int64 == 0


def test_floats_arrays_and_numpy_scalars_keep_their_own_arithmetic():
    assert as_gpu(times, 2.0**62, 4.0) == (2.0**64, [])
    big = np.array([2**62], dtype=np.int64)
    assert as_gpu(times, big, 4.0)[0][0] == 2.0**64
    value, found = as_gpu(times, np.int64(2), np.int64(3))
    assert type(value) is np.int64 and value == 6 and found == []
    elements = np.array([41], dtype=np.int64)
    assert as_gpu(in_an_element, elements)[0] == 42 and rewritten(in_an_element.__code__)[1] == 0


def test_the_check_passes_bools_floats_and_numpy_values_through_unchanged():
    found = []
    wrap, _ = checks(found)
    site = (1, "x", False)
    for value in (True, False, 2.0**70, np.int64(5), np.float32(1e30)):
        assert wrap(value, site) is value
    assert wrap(2**64 + 3, site) == 3 and found[0].python == 2**64 + 3 and found[0].int64 == 3
    assert wrap(2**63, (1, "x // y", True)) == 0          # only INT64_MIN // -1 overflows //


def test_expressions_of_literals_alone_are_left_as_python_folds_them():
    assert rewritten(literal_only.__code__)[1] == 0
    assert as_gpu(literal_only)[0] == 2**64 + (1 << 70)


def test_the_first_wrap_names_its_line_expression_and_both_values():
    _, found = as_gpu(times, 2**62, 4)
    wrap = found[0]
    assert (wrap.line, wrap.expression, wrap.python, wrap.int64) == (
        times.__code__.co_firstlineno + 1, "x * y", 2**64, 0)
    said = wrap.describe(__file__)
    assert "`x * y` is 0 in int64, the GPU's integer type" in said
    assert f"Python's integers would give {2**64}" in said and "(`return x * y`)" in said
    assert as_int64(2**64 + 7) == 7 and as_int64(-(2**63) - 1) == INT64_MAX


def test_code_and_globals_are_put_back_even_when_the_function_raises():
    original, home = times.__code__, times.__globals__
    with pytest.raises(TypeError), gpu_integers([times], []):
        times(None, 1)
    assert times.__code__ is original and not set(GLOBALS) & set(home)
    assert times(2**62, 4) == 2**64                        # Python's integers again


def test_a_closure_keeps_its_free_variables():
    step = 2**62

    def scaled(x):
        return x * step
    assert as_gpu(scaled, 2)[0] == INT64_MIN


def test_a_comprehension_wraps_too():
    def scaled_all(x):
        return [x * k for k in range(3)]
    assert as_gpu(scaled_all, 2**62)[0] == [0, 2**62, INT64_MIN]


def test_a_cell_that_rebinds_int_and_type_cannot_step_around_the_check():
    rebinds = "int = 3\ntype = len\n\n\ndef shadowed(x):\n    return x * 4\n"
    shadowed = load_function(rebinds, "shadowed", "/nonexistent/rebinds.py")
    assert as_gpu(shadowed, 2**62)[0] == 0


def test_a_function_without_source_runs_as_written_beside_one_that_is_rewritten():
    """numba-cuda's own tests make their kernels by exec of a string: Python has no source to
    compile again, so that function keeps its code (and Python's integers); a function of the
    same globals with a source is still rewritten."""
    namespace = {}
    exec(compile("def hidden(x):\n    return x + 2**62 * 4\n", "<nowhere>", "exec"), namespace)
    hidden, before = namespace["hidden"], namespace["hidden"].__code__
    with gpu_integers([hidden], []):
        assert hidden.__code__ is before and hidden(1) == 1 + 2**64
    assert rewritten(before) is None


# -- kernels --------------------------------------------------------------------------------------

def naive_attack():
    """Issue 54's 05.lab_naive attack: a branch that a GPU takes (K * 2**64 wraps to 0) and
    Python's integers do not."""
    source, name, _ = cell("05.lab_naive")
    loop = "        for k in range(K):\n"
    assert source.count(loop) == 1
    return source.replace(loop, "        steps = K\n        if K * 2**62 * 4 == 0:\n"
                                "            steps = K // 2\n        for k in range(steps):\n"), name


@needs_sim
def test_the_naive_lab_attack_fails_check_and_the_grader_saying_it_is_wrong_in_int64():
    from gemmlab_grader.isolate import judge_code
    source, name = naive_attack()
    checked = check("05.lab_naive", load_function(source, name, "/nonexistent/wrap64.py"))
    graded = judge_code("05.lab_naive", source, name, seed=3)
    line = source.splitlines().index("        if K * 2**62 * 4 == 0:") + 1
    for result in (checked, graded):
        assert result.status == "fail", result.feedback
        assert "elements are wrong" in result.feedback
        K = int(re.match(r"at M x N x K = \d+ x \d+ x (\d+):", result.feedback).group(1))
        assert (f"line {line} (`if K * 2**62 * 4 == 0:`): `K * 2**62` is "
                f"{as_int64(K * 2**62)} in int64, the GPU's integer type (Python's integers "
                f"would give {K * 2**62})") in result.feedback


DEVICE_STEPS = '''@cuda.jit(device=True)
def steps_of(K):
    return K // 2 if K * 2**62 * 4 == 0 else K


@cuda.jit
def count_steps(K, out):
    out[0] = steps_of(K)
'''


@needs_sim
def test_a_device_function_of_the_kernels_cell_computes_in_int64_too():
    from gemmlab.labs.simulator import simulate
    kernel = load_function(DEVICE_STEPS, "count_steps", "/nonexistent/device_steps.py")
    out = np.zeros(1, dtype=np.int64)
    trace = simulate(kernel, 1, 1, [("K", 19), ("out", out)])
    assert trace.fault is None and out[0] == 9
    assert "line 3 (`return K // 2 if K * 2**62 * 4 == 0 else K`): `K * 2**62`" in trace.wrapped
