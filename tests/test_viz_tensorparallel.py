"""The split drawings show the ledger's shapes to scale, in one colour per rank."""
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import gemmlab as gl  # noqa: E402
from gemmlab.viz import tensorparallel as tpviz  # noqa: E402


def _sizes_by_colour(fig):
    found = {}
    for patch in fig.axes[0].patches:
        key = tuple(np.round(patch.get_facecolor()[:3], 3))
        found.setdefault(key, []).append((round(patch.get_height()), round(patch.get_width())))
    return found


@pytest.mark.parametrize("mode", ["column", "row"])
def test_each_rank_gets_the_ledger_shapes(mode):
    M, K, N, p = 6, 9, 15, 3
    ledger = gl.parallel.shape_ledger((M, K), (K, N), p)[mode]
    fig = tpviz.draw_linear_split(mode, M, K, N, p)
    by_colour = _sizes_by_colour(fig)
    for r in range(p):
        shapes = by_colour[tuple(np.round(matplotlib.colors.to_rgb(tpviz.rank_colour(r)), 3))]
        assert ledger.W_r in shapes and ledger.local in shapes
        if mode == "row":
            assert ledger.X_r in shapes
    replicated = by_colour.get(tuple(np.round(matplotlib.colors.to_rgb(tpviz.REPLICATED), 3)), [])
    assert replicated == ([(M, K)] if mode == "column" else [])
    plt.close(fig)


def test_bad_mode_and_non_divisible_sizes():
    with pytest.raises(ValueError, match="'column' or 'row'"):
        tpviz.draw_linear_split("diagonal", 4, 4, 4, 2)
    with pytest.raises(ValueError, match="N = 10 must be divisible by p = 4"):
        tpviz.draw_splits(4, 8, 10, 4)


def test_bar_heights_are_the_values():
    series = {"lean": [0, 120, 180], "gather": [0, 300, 450]}
    fig = tpviz.plot_bytes([1, 2, 4], series, "bytes")
    heights = [bar.get_height() for bar in fig.axes[0].patches]
    assert heights == series["lean"] + series["gather"]
    with pytest.raises(ValueError, match="3 labels"):
        tpviz.plot_bytes([1, 2, 4], {"x": [1]}, "bytes")
    plt.close("all")
