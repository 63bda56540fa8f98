"""The rank-grid drawing and widget highlight exactly the groups ``RankGrid.group`` gives."""
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

import gemmlab as gl  # noqa: E402
from gemmlab.viz import rankgrid  # noqa: E402

GRID = gl.parallel.RankGrid(tp=4, cp=2, dp=2, pp=2)


@pytest.mark.parametrize("rank", [0, 5, 22, 31])
def test_roles_follow_the_grid_groups(rank):
    roles = rankgrid.roles(GRID, rank)
    assert roles[rank] == "self"
    for axis in gl.parallel.AXES:
        members = set(GRID.group(axis, rank)) - {rank}
        assert {r for r, kind in roles.items() if kind == axis} == members
    in_some_group = set().union(*(GRID.group(a, rank) for a in gl.parallel.AXES))
    assert {r for r, kind in roles.items() if kind is None} == set(range(GRID.size)) - in_some_group


def test_cells_do_not_overlap():
    positions = {rankgrid.cell_position(GRID, r) for r in range(GRID.size)}
    assert len(positions) == GRID.size


def test_drawing_colours_each_cell_by_its_role():
    fig = rankgrid.draw_rankgrid(GRID, 6)
    ax = fig.axes[0]
    roles = rankgrid.roles(GRID, 6)
    colour_of = {rankgrid.cell_position(GRID, r): kind for r, kind in roles.items()}
    for patch in ax.patches:
        kind = colour_of[(round(patch.get_x()), round(patch.get_y()))]
        expected = "white" if kind == "self" else rankgrid.COLOURS.get(kind, rankgrid.OTHER)
        assert matplotlib.colors.same_color(patch.get_facecolor(), expected)
    assert len(ax.patches) == GRID.size and ax.get_title()
    plt.close(fig)


def test_moving_the_slider_changes_the_highlighted_groups():
    explorer = rankgrid.rankgrid_explorer(GRID, rank=0)
    assert explorer.groups == {a: GRID.group(a, 0) for a in gl.parallel.AXES}
    explorer.picker.value = 13
    assert explorer.groups == {a: GRID.group(a, 13) for a in gl.parallel.AXES}
    assert explorer.groups != {a: GRID.group(a, 0) for a in gl.parallel.AXES}
    assert "rank 13" in explorer.text.value and "rank 13" in explorer.figure.axes[0].get_title()
    assert explorer.picker.max == GRID.size - 1
