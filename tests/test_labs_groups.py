"""13.lab_groups: the reference passes on the public and hidden grids and agrees with RankGrid;
every feedback message has the broken groups() it is for."""
import itertools

import numpy as np
import pytest

from gemmlab.grading import judge
from gemmlab.grading.bank import get_question
from gemmlab.labs import groups as lab
from gemmlab.parallel import AXES, RankGrid
from gemmlab.labs.solutions import solution

REFERENCE = solution("13.lab_groups", name="groups")

QID = "13.lab_groups"


def _numbered(order):
    """groups() for ranks numbered with the axes of ``order`` from fastest to slowest."""
    def groups(tp, cp, dp, pp, axis):
        sizes = {"tp": tp, "cp": cp, "dp": dp, "pp": pp}
        strides, stride = {}, 1
        for a in order:
            strides[a] = stride
            stride *= sizes[a]
        others = [a for a in order if a != axis]
        return [[sum(i * strides[a] for a, i in zip(others, fixed, strict=True)) + k * strides[axis]
                 for k in range(sizes[axis])]
                for fixed in itertools.product(*(range(sizes[a]) for a in others))]
    return groups


reversed_order = _numbered(["pp", "dp", "cp", "tp"])


def fixes_the_axis(tp, cp, dp, pp, axis):
    """The ranks that share this axis's coordinate: the complement of a group."""
    sizes = {"tp": tp, "cp": cp, "dp": dp, "pp": pp}
    stride = {"tp": 1, "cp": tp, "dp": tp * cp, "pp": tp * cp * dp}[axis]
    n = tp * cp * dp * pp
    return [[r for r in range(n) if r // stride % sizes[axis] == i] for i in range(sizes[axis])]


def consecutive_runs(tp, cp, dp, pp, axis):
    """Every group taken as a run of consecutive ranks: right for tp only."""
    size = {"tp": tp, "cp": cp, "dp": dp, "pp": pp}[axis]
    return [list(range(s, s + size)) for s in range(0, tp * cp * dp * pp, size)]


def off_the_grid(tp, cp, dp, pp, axis):
    return [[r + 1 for r in g] for g in REFERENCE(tp, cp, dp, pp, axis)]


def first_group_twice(tp, cp, dp, pp, axis):
    found = REFERENCE(tp, cp, dp, pp, axis)
    return found + found[:1]


def first_group_only(tp, cp, dp, pp, axis):
    return REFERENCE(tp, cp, dp, pp, axis)[:1]


def singletons(tp, cp, dp, pp, axis):
    return [[r] for r in range(tp * cp * dp * pp)]


def crashes(tp, cp, dp, pp, axis):
    return {"cp": cp}[axis]


def a_string(tp, cp, dp, pp, axis):
    return "0 1 2 3"


def cp_and_dp_swapped(tp, cp, dp, pp, axis):
    """Numbered tp fastest, then dp, then cp (cp and dp swapped): not pp fastest."""
    return RankGrid(tp=tp, cp=cp, dp=dp, pp=pp, order="tp-dp-cp-pp").groups(axis)


def float_ranks(tp, cp, dp, pp, axis):
    return [[float(r) for r in g] for g in REFERENCE(tp, cp, dp, pp, axis)]


BROKEN = [
    (reversed_order, "reversed order: your groups number the ranks with pp varying fastest"),
    (cp_and_dp_swapped, "in the order tp-dp-cp-pp (fastest first): dp and cp are swapped"),
    (fixes_the_axis, "groups that fix the wrong coordinates: your group [0, "),
    (consecutive_runs, "groups that fix the wrong coordinates: your group [0, 1"),
    (off_the_grid, "does not exist; the grid has"),
    (first_group_twice, "is in more than one group"),
    (first_group_only, "is in no group"),
    (singletons, "has 1 rank; a tp group has one rank per tp coordinate"),
    (crashes, "raised KeyError: 'tp'"),
    (a_string, "returned str; expected a list of groups"),
    (float_ranks, "ranks are whole numbers"),
]


def test_the_reference_is_rankgrid_and_passes_public_and_hidden_grids():
    for degrees in [(2, 3, 2, 2), (4, 1, 3, 2), (1, 1, 1, 1), (3, 2, 4, 1)]:
        for axis in AXES:
            assert (sorted(map(sorted, REFERENCE(*degrees, axis)))
                    == sorted(map(sorted, RankGrid(*degrees).groups(axis))))
    assert judge(QID, REFERENCE).status == "pass"
    for seed in range(3):
        assert judge(QID, REFERENCE, np.random.default_rng(seed)).status == "pass"
        hidden = get_question(QID).kind.hidden(np.random.default_rng(seed))
        assert not set(hidden) & set(get_question(QID).kind.cases())


def test_any_order_of_groups_and_of_ranks_in_a_group_passes():
    def shuffled(tp, cp, dp, pp, axis):
        found = [list(reversed(g)) for g in REFERENCE(tp, cp, dp, pp, axis)]
        return [tuple(g) for g in reversed(found)]
    assert judge(QID, shuffled).status == "pass"


@pytest.mark.parametrize("program,message", BROKEN, ids=[p.__name__ for p, _ in BROKEN])
def test_each_mistake_fails_with_its_own_message(program, message):
    public = judge(QID, program)
    if program is fixes_the_axis:        # the message names the group and what it fixes
        assert "[0, 2, 4, 6, 8, 10, 12, 14] walks cp, dp, pp and fixes tp" in public.feedback
    if program is consecutive_runs:
        assert "[0, 1] walks tp and fixes cp, dp, pp. A cp group fixes the other" in public.feedback
    for rng in (None, np.random.default_rng(4)):
        result = judge(QID, program, rng)
        assert result.status == "fail"
        assert message in result.feedback, result.feedback


def test_an_untouched_skeleton_is_not_attempted_and_a_loop_is_stopped(monkeypatch):
    assert judge(QID, lambda tp, cp, dp, pp, axis: ...).status == "not attempted"
    monkeypatch.setattr(lab, "TIME_LIMIT", 0.3)

    def spin(tp, cp, dp, pp, axis):
        while True:
            pass
    assert "did not finish within 0.3 s" in judge(QID, spin).feedback
