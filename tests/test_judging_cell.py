"""check() and the grade agree (issue 23 item 7): check() sends a code answer's cell to a fresh
worker, alone, as the grader does; a cell that depends on another cell fails on both paths, and
check() names what it takes from elsewhere. The same public cases on both paths."""
import pytest

from gemmlab.grading.bank import get_question
from gemmlab.grading.checker import judge_alone_in_a_worker
from gemmlab.judging import load_function, runtime
from gemmlab.labs.solutions import cell
from gemmlab_grader.isolate import judge_code

RING, _, _ = cell("07.lab_ring", name="ring_allreduce")
HELPER = ("def split(x, n):\n    return [c.copy() for c in np.array_split(x, n)]\n\n\n")


def _live(source, name, label, **from_other_cells):
    fn = load_function(source, name, f"/nonexistent/{label}.py")
    fn.__globals__.update(from_other_cells)
    return fn


@pytest.mark.parametrize("seed", [None])
def test_a_ring_whose_helper_lives_in_another_cell_fails_check_and_grade_alike(seed):
    needs_helper = RING.replace("chunks = [c.copy() for c in np.array_split(x, n)]",
                                "chunks = split(x, n)")
    assert needs_helper != RING
    helper = load_function(HELPER, "split", "/nonexistent/helper.py")
    checked = judge_alone_in_a_worker(get_question("07.lab_ring"),
                                      _live(needs_helper, "ring_allreduce", "ring", split=helper))
    graded = judge_code("07.lab_ring", needs_helper, "ring_allreduce", seed=seed, timeout=240)
    assert checked.status == graded.status == "fail"
    assert "NameError" in graded.feedback and "split" in graded.feedback
    assert "The grader runs this cell alone" in checked.feedback and "split comes from" in \
        checked.feedback
    whole = HELPER + needs_helper                     # the same cell with its helper: both pass
    checked = judge_alone_in_a_worker(get_question("07.lab_ring"),
                                      _live(whole, "ring_allreduce", "ring_whole"))
    graded = judge_code("07.lab_ring", whole, "ring_allreduce", seed=seed, timeout=240)
    assert checked.status == graded.status == "pass", (checked.feedback, graded.feedback)
    assert checked.feedback == graded.feedback         # the same public cases, the same words


def test_a_skeleton_judged_alone_in_the_runtime_is_not_attempted():
    skeleton, name, _ = cell("07.lab_ring", folder="exercises", name="ring_allreduce")
    status, text = runtime.judge(get_question("07.lab_ring"), skeleton, name)
    assert status == "not attempted", text
