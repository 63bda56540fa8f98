"""Numbers as the GPU computes them (issue 54, item 2): the simulator computes a kernel's
arithmetic, comparisons and math calls in the types numba gives them (integers wrapped to int64,
float32 beside a float in float64), so a kernel that relies on Python's or NumPy's rules fails on
the simulator as it fails on every GPU. First the rewrite on plain functions of this file (their
source is what linecache holds), then kernels: the 05.lab_naive attacks through check() and the
grader (a branch taken in int64 only, one taken in float64 only), and a device function."""
import math
import re
from math import sqrt

import numpy as np
import pytest

import gemmlab as gl
from gemmlab.grading import check
from gemmlab.judging import load_function
from gemmlab.labs.gpu_numbers import BINARY, GLOBALS, INT64_MAX, INT64_MIN, NEGATE, as_int64, \
    checks, gpu_arithmetic, rewritten
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


def divide(x, y):
    return x / y


def equal(x, y):
    return x == y


def less(x, y):
    return x < y


def between(x, lo, hi):
    return lo <= x <= hi


def exp_of(x):
    return math.exp(x)


def root_of(x):
    return sqrt(x)


def smallest(x, y):
    return min(x, y)


def in_an_element(a, step=1):
    a[0] += step
    return a[0]


def as_gpu(fn, *args):
    """(what ``fn(*args)`` returns with int64 integers, the wraps found)."""
    found = []
    with gpu_arithmetic([fn], found):
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


def test_one_floating_type_and_what_numba_does_not_type_keep_their_own_arithmetic():
    assert as_gpu(times, 2.0**62, 4.0) == (2.0**64, [])
    value, _ = as_gpu(times, np.float32(0.1), np.float32(3))
    assert type(value) is np.float32 and value == np.float32(0.1) * np.float32(3)
    big = np.array([2**62], dtype=np.int64)
    assert as_gpu(times, big, 4.0)[0][0] == 2.0**64         # an array: NumPy's rules
    assert as_gpu(times, (1, 2), 2)[0] == (1, 2, 1, 2)      # a tuple: Python's


def test_a_float32_beside_a_python_float_or_int_computes_in_float64_as_numba_types_it():
    # NumPy 2 computes float32 + a Python float in float32 (NEP 50); numba types it float64.
    x = np.float32(0.1)
    assert type(x + 0.5) is np.float32                       # what the simulator did before
    for fn, other in ((plus, 1e-9), (times, 3), (minus, 0.25)):
        value, found = as_gpu(fn, x, other)
        assert type(value) is float and value == fn(float(x), float(other)) and found == []
    assert x + 1e-9 == x and as_gpu(plus, x, 1e-9)[0] != float(x)   # NumPy 2 / numba
    assert as_gpu(accumulate, 0.0, x)[0] == float(x)        # acc = 0.0; acc += x: float64


def test_int32_values_widen_to_int64_and_divide_as_floats():
    i32 = np.int32(2**31 - 1)
    value, found = as_gpu(plus, i32, np.int32(1))
    assert value == 2**31 and type(value) is int and found == []   # NumPy: int32 wraps
    assert as_gpu(negate, np.int32(-2**31))[0] == 2**31
    assert as_gpu(floor_div, np.int32(-7), 2)[0] == -4
    big = 2**53 + 1
    assert as_gpu(divide, big, 3)[0] == float(big) / 3.0 != big / 3     # both to float64 first
    assert as_gpu(times, np.int64(2), np.int64(3)) == (6, [])


def test_an_elements_augmented_assignment_is_computed_and_stored_as_numba_does():
    elements = np.array([41], dtype=np.int64)
    assert as_gpu(in_an_element, elements)[0] == 42 and rewritten(in_an_element.__code__)[1] == 1
    step = 2**-24 + 2**-50                       # below float32's precision, not float64's
    numpy_way = np.array([1.0], np.float32)
    numpy_way[0] += step                         # NumPy 2: step rounded to float32 first
    assert numpy_way[0] == 1.0
    assert as_gpu(in_an_element, np.array([1.0], np.float32), step)[0] == np.float32(1 + 2**-23)
    narrow = np.array([2**31 - 1], np.int32)     # int32 + int64 is int64, stored truncated
    assert as_gpu(in_an_element, narrow, np.int64(1))[0] == -2**31


def test_comparisons_are_made_in_the_type_numba_converts_both_sides_to():
    x = np.float32(0.1)
    assert (x == 0.1) is np.True_                            # NumPy 2: 0.1 rounded to float32
    assert as_gpu(equal, x, 0.1)[0] is False                 # numba: x widened to float64
    assert as_gpu(less, x, 0.1)[0] is (float(x) < 0.1)
    big = 2**53 + 1
    assert not equal(big, float(2**53))                      # Python compares exactly
    assert as_gpu(equal, big, float(2**53))[0] is True       # numba: the int as a float64
    assert as_gpu(less, 3, 4) == (True, [])
    assert between(x, 0.0, 0.1) and as_gpu(between, x, 0.0, 0.1)[0] is False     # chained
    assert as_gpu(between, np.float32(0.05), 0.0, 0.1)[0] is True


def test_math_functions_and_min_max_return_numbas_types():
    x = np.float32(2.0)
    value = as_gpu(exp_of, x)[0]
    assert type(value) is np.float32 and value == np.float32(math.exp(2.0))
    assert type(as_gpu(exp_of, 2.0)[0]) is float
    assert type(as_gpu(root_of, x)[0]) is np.float32          # `from math import sqrt`
    smaller = as_gpu(smallest, x, 0.5)[0]
    assert type(smaller) is float and smaller == 0.5         # float32 and float: float64
    assert type(as_gpu(smallest, x, np.float32(1))[0]) is np.float32


def test_the_checks_keep_pythons_result_where_it_is_numbas_and_wrap_python_ints():
    found = []
    check = checks(found)
    binary, negate_ = check[BINARY], check[NEGATE]
    for value in (2.0**70, np.float32(1e30)):
        assert binary(value + value, value, value, (1, "x + y", "add")) == value + value
    assert binary(2**63 + 3, 2**63, 3, (1, "x + y", "add")) == INT64_MIN + 3
    assert found[0].python == 2**63 + 3 and found[0].int64 == INT64_MIN + 3
    assert binary(2**63, INT64_MIN, -1, (1, "x // y", "floordiv")) == 0   # numba's
    assert negate_(2**63, INT64_MIN, (1, "-x", "neg")) == INT64_MIN
    assert set(check) == set(GLOBALS)


def test_an_operand_is_evaluated_once():
    reads = []

    def counted(x):
        reads.append(x)
        return x

    def twice(x):
        return counted(x) * 3 + -counted(x) + (counted(x) < 5) + (0 < counted(x) < 5)
    assert as_gpu(twice, np.int32(2))[0] == 2 * 3 - 2 + 1 + 1 and len(reads) == 4


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
    with pytest.raises(TypeError), gpu_arithmetic([times], []):
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
        return [x * k for k in range(len((1, 2, 3)) * 1)]    # (no := in the iterable)
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
    with gpu_arithmetic([hidden], []):
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


def float64_attack():
    """A branch that a GPU takes and NumPy 2 does not: ``acc + 1e-12`` is float64 in numba's
    typing, so it differs from a nonzero float32 ``acc``; NumPy 2 rounds it back to float32."""
    source, name, _ = cell("05.lab_naive")
    store = "        C[row, col] = acc\n"
    assert source.count(store) == 1
    return source.replace(store, "        C[row, col] = acc if acc + 1e-12 == acc else 0.0\n"), name


@needs_sim
def test_a_branch_taken_in_float64_only_fails_check_and_the_grader():
    from gemmlab_grader.isolate import judge_code
    source, name = float64_attack()
    checked = check("05.lab_naive", load_function(source, name, "/nonexistent/float64.py"))
    graded = judge_code("05.lab_naive", source, name, seed=3)
    for result in (checked, graded):
        assert result.status == "fail", result.feedback
        assert re.search(r"C\[0, 0\] is 0, expected .*; (\d+) of \1 elements are wrong",
                         result.feedback), result.feedback


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
