"""where_it_lives: a helper runs next to the student's function, here for a plain function and in
the other process for a stand-in that has ``call_helper`` (the grader's proxy); the package's
helpers are found by name on the other side, and nothing outside gemmlab is."""
import numpy as np
import pytest

from gemmlab.judging import code_of, where_it_lives
from gemmlab.judging.where import helper_spec, package_object
from gemmlab.labs.kernel_lab import TILED


def double(fn, x):
    return 2 * fn(x)


def test_a_plain_function_runs_the_helper_here():
    assert where_it_lives(lambda x: x + 1, double, 4) == 10


def test_a_function_living_elsewhere_is_handed_the_helper():
    class Elsewhere:
        def __init__(self):
            self.asked = []

        def call_helper(self, helper, *args):
            self.asked.append((helper, args))
            return "ran there"

    fn = Elsewhere()
    assert where_it_lives(fn, double, 4) == "ran there"
    assert fn.asked == [(double, (4,))]


def test_a_call_helper_attribute_on_a_plain_function_changes_nothing():
    def student(x):
        return x
    student.call_helper = lambda helper, *args: "forged"
    assert where_it_lives(student, double, 4) == 8


def test_only_module_level_functions_of_gemmlab_travel_as_helpers():
    assert helper_spec(code_of) == "gemmlab.judging.source:code_of"
    for bad in (np.sum, double, lambda fn: fn):
        with pytest.raises(ValueError, match="module-level function of gemmlab"):
            helper_spec(bad)


def test_package_object_finds_gemmlab_objects_and_nothing_else():
    assert package_object("gemmlab.labs.kernel_lab:TILED") is TILED
    assert package_object("gemmlab.judging.source:code_of") is code_of
    for bad in ("os:system", "gemmlab_grader.grade:main", "gemmlab.labs", "gemmlab.x:<lambda>"):
        with pytest.raises(ValueError, match="not a module-level object of gemmlab"):
            package_object(bad)
