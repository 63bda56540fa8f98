"""Lesson 12's figures and widget build, label their axes and draw what they are given."""
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

import gemmlab as gl  # noqa: E402
from gemmlab.viz import tensorcore as tcviz  # noqa: E402


def teardown_function():
    plt.close("all")


def test_hierarchy_draws_every_tile_and_fragment():
    fig = tcviz.draw_hierarchy(128, 32, 16)
    left, right = fig.axes
    assert len(left.patches) == (128 // 32) ** 2
    assert len(right.patches) == (32 // 16) ** 2
    assert all(ax.get_xlabel() and ax.get_ylabel() for ax in fig.axes)


@pytest.mark.parametrize("name", ["lesson", "fast", "wide"])
def test_ownership_labels_every_warp(name):
    t = gl.tensorcore.get_tiling(name)
    fig = tcviz.draw_ownership(t)
    texts = [x.get_text() for x in fig.axes[0].texts]
    assert texts == [f"warp {w}" for w in range(t.warps)]
    assert "elements" in fig.axes[0].get_xlabel()


def test_error_plot_draws_models_measurements_and_bounds():
    res = gl.tensorcore.error_vs_k([16, 64], "positive", trials=4, seed=1)
    measured = {"K": [16, 64], "fp16_fp32acc": [1e-8, 2e-8]}
    fig = tcviz.draw_error_vs_k(res, measured=measured)
    labels = [line.get_label() for line in fig.axes[0].lines]
    assert sum("(model)" in s for s in labels) == len(tcviz.SERIES)
    assert sum("measured" in s for s in labels) == 1
    assert sum(s.startswith("bound") for s in labels) == 2
    assert fig.axes[0].get_yscale() == "log" and "K" in fig.axes[0].get_xlabel()


def test_performance_bars_and_empty_input():
    rows = [{"kernel": "wmma_fp16_fast", "tflops": 3.0}, {"kernel": "cublas_fp16", "tflops": 7.0},
            {"kernel": "ladder_outer", "error": "failed"}]
    fig = tcviz.draw_performance(rows, "t")
    assert len(fig.axes[0].patches) == 2
    assert "TFLOP/s" in fig.axes[0].get_xlabel()
    with pytest.raises(ValueError, match="no timing rows"):
        tcviz.draw_performance([{"kernel": "x", "error": "e"}], "t")


def test_error_widget_redraws_on_change(monkeypatch):
    drawn = []
    monkeypatch.setattr(tcviz, "draw_error_vs_k", lambda res: drawn.append(res))
    box = tcviz.error_widget(max_log2_k=8, trials=4)
    kind, top = box.children[0].children
    assert drawn[-1]["inputs"] == "positive" and max(drawn[-1]["K"]) <= 2 ** 8
    kind.value = "random"
    assert len(drawn) == 2 and drawn[-1]["inputs"] == "random"
    top.value = 6
    assert len(drawn) == 3 and max(drawn[-1]["K"]) <= 2 ** 6
