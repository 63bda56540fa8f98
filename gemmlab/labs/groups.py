"""Lab 13.lab_groups: ``groups(tp, cp, dp, pp, axis)`` -> the rank groups of one axis.

Ranks are numbered in Megatron-LM's order, tp fastest, then cp, dp, pp; a group along an axis is
the ranks that differ only in that coordinate. The check compares every group of every axis with
:class:`gemmlab.parallel.RankGrid` on grids the student does not see (some degrees 3, so a
stride that only works for powers of two shows). The order of the groups in the list and of the
ranks in a group does not matter. Known mistakes: the order of the axes reversed (pp fastest),
and groups that fix the wrong coordinates (which is what any other order amounts to).
"""

import itertools

import numpy as np

from ..judging import FAIL, PASS, is_missing, where_it_lives
from ..parallel.grid import AXES, RankGrid
from .kinds import CodeLab, NoAnswer
from .limits import TIME_LIMIT, call_plain


def _normalise(groups, what):
    """A sorted list of sorted tuples of ints, or a ValueError saying what is wrong."""
    if is_missing(groups):
        raise NoAnswer()
    if isinstance(groups, (str, bytes)) or not hasattr(groups, "__iter__"):
        raise ValueError(f"{what} returned {type(groups).__name__}; expected a list of groups, "
                         f"each a list of ranks")
    result = []
    for group in groups:
        if isinstance(group, (str, bytes)) or not hasattr(group, "__iter__"):
            raise ValueError(f"{what} returned a list holding {type(group).__name__} "
                             f"{group!r:.30}; each group must be a list of ranks, e.g. [0, 1]")
        members = list(group)
        if not all(isinstance(r, (int, np.integer)) and not isinstance(r, (bool, np.bool_))
                   for r in members):
            raise ValueError(f"{what} returned the group {members!r:.60}; ranks are whole "
                             f"numbers")
        result.append(tuple(sorted(int(r) for r in members)))
    return sorted(result)


ORDER = ("Megatron's order is tp fastest, then cp, dp, pp: rank = i_tp + tp (i_cp + cp (i_dp + "
         "dp i_pp)), so a tp group is a run of consecutive ranks.")


def _show(group, limit=8):
    shown = ", ".join(map(str, group[:limit]))
    return f"[{shown}{', ...' if len(group) > limit else ''}]"


def _varying(grid, group):
    """The axes whose coordinate changes inside ``group`` (Megatron's numbering)."""
    coords = [grid.coords(r) for r in group]
    return [a for a in AXES if len({getattr(c, a) for c in coords}) > 1]


def check_groups(fn, degrees):
    """(status, feedback) of ``fn`` on the grid ``degrees`` (tp, cp, dp, pp), every axis."""
    grid = RankGrid(*degrees)
    for axis in AXES:
        what = f"groups(tp={degrees[0]}, cp={degrees[1]}, dp={degrees[2]}, pp={degrees[3]}, " \
               f"axis={axis!r})"
        called = where_it_lives(fn, call_plain, (*degrees, axis), TIME_LIMIT)
        if called["error"]:
            return FAIL, f"{what} {called['error']}"
        value = called["value"]
        try:
            got = _normalise(value, what)
        except ValueError as exc:
            return FAIL, str(exc)
        expected = _normalise(grid.groups(axis), "RankGrid")
        if got == expected:
            continue
        return FAIL, _diagnose(grid, axis, got, what, _every_axis(fn, degrees))
    return PASS, ""


def _every_axis(fn, degrees):
    """{axis: normalised groups} of ``fn`` on this grid, for the axes where it returns groups:
    the evidence for which numbering order the student used."""
    found = {}
    for axis in AXES:
        called = where_it_lives(fn, call_plain, (*degrees, axis), TIME_LIMIT)
        try:
            found[axis] = _normalise(called["value"], "groups") if not called["error"] else None
        except (ValueError, NoAnswer):
            found[axis] = None
    return found


def _other_order(grid, groups):
    """The order of the axes (fastest first, not Megatron's) whose groups are ``groups`` ({axis:
    groups}) on every axis, or None; of several, the closest to Megatron's."""
    matches = [order for order in itertools.permutations(AXES) if order != tuple(AXES)
               and all(got == _normalise(RankGrid(**grid.sizes, order="-".join(order))
                                         .groups(axis), "RankGrid")
                       for axis, got in groups.items())]
    return min(matches, key=lambda o: sum(a != b for a, b in zip(o, AXES, strict=True)), default=None)


def _diagnose(grid, axis, got, what, every_axis=None):
    n, size = grid.size, grid.sizes[axis]
    groups = {a: g for a, g in (every_axis or {}).items() if g is not None}
    order = _other_order(grid, dict(groups, **{axis: got}))
    if order == tuple(reversed(AXES)):
        return (f"{what}: reversed order: your groups number the ranks with pp varying fastest "
                f"({'-'.join(order)}). {ORDER}")
    if order is not None:
        moved = [a for a, b in zip(order, AXES, strict=True) if a != b]
        return (f"{what}: your groups number the ranks in the order {'-'.join(order)} (fastest "
                f"first): {' and '.join(moved)} are swapped. {ORDER}")
    members = [r for g in got for r in g]
    outside = sorted({r for r in members if not 0 <= r < n})
    if outside:
        return f"{what}: rank {outside[0]} does not exist; the grid has {n} ranks, 0 to {n - 1}."
    for group in got:
        walked = _varying(grid, group)
        if walked and walked != [axis]:
            fixed = [a for a in AXES if a not in walked]
            return (f"{what}: groups that fix the wrong coordinates: your group {_show(group)} "
                    f"walks {', '.join(walked)} and fixes {', '.join(fixed) or 'nothing'}. A "
                    f"{axis} group fixes the other three coordinates "
                    f"({', '.join(a for a in AXES if a != axis)}) and walks {axis} from 0 to "
                    f"{size - 1}.")
    twice = sorted({r for r in members if members.count(r) > 1})
    missing = sorted(set(range(n)) - set(members))
    if twice or missing:
        which = f"rank {twice[0]} is in more than one group" if twice else \
            f"rank {missing[0]} is in no group"
        return (f"{what}: {which}; the {axis} groups must cover the {n} ranks once each: "
                f"{n // size} groups of {size}.")
    bad = next(g for g in got if len(g) != size)
    return (f"{what}: the group {_show(bad)} has {len(bad)} rank{'s' if len(bad) > 1 else ''}; "
            f"a {axis} group has one rank per {axis} coordinate, {size} in all.")


class GroupsLab(CodeLab):
    """13.lab_groups: every group of every axis on several grids."""
    function = "your groups"
    PUBLIC = [(2, 2, 2, 2), (4, 1, 3, 2), (2, 3, 1, 2)]

    def cases(self):
        return list(self.PUBLIC)

    def hidden(self, rng):
        cases = []
        while len(cases) < 4:
            degrees = tuple(int(d) for d in rng.integers(2, 5, 4))
            if np.prod(degrees) <= 72 and degrees not in self.PUBLIC + cases:
                cases.append(degrees)
        return cases

    def describe(self, case):
        tp, cp, dp, pp = case
        return f"on the grid tp={tp}, cp={cp}, dp={dp}, pp={pp}"

    def check_case(self, fn, case):
        return check_groups(fn, case)

    def summary(self, cases):
        return (f"right on all {len(cases)} grids, every group of every axis, in Megatron's "
                f"order")
