"""A student's function travels as its cell's text: code_of finds the cell, run_cell and
load_function run it again after the course's preamble."""
import linecache

import pytest

from gemmlab.judging import code_of, load_function
from gemmlab.judging.source import run_cell


def test_code_of_gives_the_cell_of_a_live_function():
    namespace = {}
    source = "K = 3\ndef times_k(x):\n    return K * x\n"
    linecache.cache["<cell-42>"] = (len(source), None, source.splitlines(True), "<cell-42>")
    exec(compile(source, "<cell-42>", "exec"), namespace)
    assert code_of(namespace["times_k"]) == (source, "times_k")
    with pytest.raises(TypeError, match="expected a function defined in a notebook cell"):
        code_of(42)
    with pytest.raises(ValueError, match="define the function with def"):
        code_of(lambda x: x)


def test_a_loaded_cell_has_the_preamble_and_a_silent_check():
    fn = load_function("def f(n):\n    check('01.weights_gib', n)\n"
                       "    return np.float32(n) + math.pi + float32(1)\n", "f")
    assert fn(1) == pytest.approx(2 + 3.14159265, rel=1e-6)
    assert linecache.getlines("<student cell>")[0] == "def f(n):\n"


def test_what_a_cell_defined_before_it_raised_stays_usable():
    namespace, error = run_cell("def f():\n    return 7\nraise KeyError('late')\n", "<late>")
    assert isinstance(error, KeyError) and namespace["f"]() == 7
    with pytest.raises(KeyError, match="late"):
        load_function("def f():\n    return 7\nraise KeyError('late')\n", "f")
    with pytest.raises(ValueError, match="does not define a function named 'g'"):
        load_function("g = 3\n", "g")
