"""A notebook's check() of a kernel: the cell judged alone in the notebook's own process by the
grader's judging functions; its compile cached by source and architecture; a kernel that never
ends a FAIL; a name from another cell named."""
import linecache
import re

import pytest

from gemmlab import device
from gemmlab.grading import checker
from gemmlab.grading.checker import check
from gemmlab.judging import load_function
from gemmlab.labs import compile as compile_
from gemmlab.labs import kernel_lab
from gemmlab.labs.solutions import cell

pytestmark = pytest.mark.skipif(device.backend() != "sim", reason="the simulator backend")
BODY = "        out[i] = a[i] + 10"


def _kernel(edit=None, label="plain"):
    source, name, _ = cell("03.puzzle_map")
    if edit:
        assert source.count(BODY) == 1
        source = source.replace(BODY, edit)
    return load_function(source, name, f"/nonexistent/{label}.py")


def test_a_second_check_of_an_unchanged_kernel_compiles_and_runs_nothing(monkeypatch):
    runs = []
    examine = kernel_lab.KernelLab.examine
    monkeypatch.setattr(kernel_lab.KernelLab, "examine",
                        lambda self, *a, **k: runs.append(1) or examine(self, *a, **k))
    kernel = _kernel(BODY + "  # a fresh cell", "cached")
    before = compile_.COMPILES["count"]
    first = check("03.puzzle_map", kernel)
    assert first.status == "pass" and compile_.COMPILES["count"] == before + 1 and len(runs) == 1
    again = check("03.puzzle_map", kernel)
    assert (again.status, again.feedback) == (first.status, first.feedback)
    assert compile_.COMPILES["count"] == before + 1 and len(runs) == 1   # no compile, no run
    checker._VERDICTS.clear()                     # the verdict forgotten: the compile still cached
    assert check("03.puzzle_map", kernel).status == "pass" and len(runs) == 2
    assert compile_.COMPILES["count"] == before + 1


def test_check_runs_in_this_process_without_a_worker(monkeypatch):
    def no_worker(*args, **kwargs):
        raise AssertionError("check() started the grader's worker")
    monkeypatch.setattr(checker, "judge_alone", no_worker)
    assert check("03.puzzle_map", _kernel(BODY + "  # here", "here")).status == "pass"


def test_a_kernel_that_never_ends_is_a_fail_naming_the_endless_loop(monkeypatch):
    monkeypatch.setattr(kernel_lab, "CASE_LIMIT", 2.0)     # the lab's 10 s, shortened
    endless = "        while out[i] == out[i]:\n            out[i] = a[i] + 10"
    kernel = _kernel(endless, "endless")
    result = check("03.puzzle_map", kernel)
    assert result.status == "fail"
    assert "did not finish within 2 s" in result.feedback and "endless loop?" in result.feedback
    assert "loop?." not in result.feedback
    source, _, _ = cell("03.puzzle_map")
    first = source.replace(BODY, endless).splitlines().index(endless.splitlines()[0]) + 1
    assert re.search(rf"thread [(\d,)]+ of block [(\d,)]+ at line ({first}|{first + 1})\b",
                     result.feedback), result.feedback      # the loop's line, in the stuck thread


def test_a_name_from_another_cell_is_named_by_check():
    source, name, _ = cell("03.puzzle_map")
    source = source.replace("a[i] + 10", "a[i] + OFFSET")
    label = "/nonexistent/offset.py"
    kernel = load_function("OFFSET = 10\n" + source, name, label)   # the notebook has OFFSET...
    linecache.cache[label] = (len(source), None, source.splitlines(True), label)  # ...not the cell
    result = check("03.puzzle_map", kernel)
    assert result.status == "fail"
    assert "runs this cell alone" in result.feedback and "OFFSET" in result.feedback


def test_an_untouched_template_is_not_attempted_without_a_compile():
    untouched = _kernel("        pass", "untouched")
    before = compile_.COMPILES["count"]
    result = check("03.puzzle_map", untouched)
    assert result.status == "not attempted" and "write its body" in result.feedback
    assert compile_.COMPILES["count"] == before                # nothing written, nothing compiled
