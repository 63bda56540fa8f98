"""Timelines, the reduction tree and the Amdahl widget draw what the models compute."""
import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import gemmlab as gl  # noqa: E402
from gemmlab.viz import speedup  # noqa: E402

rng = np.random.default_rng()


def test_timeline_draws_one_bar_per_interval_and_marks_the_end():
    bars = gl.perfmodel.pipeline_schedule(int(rng.integers(2, 6)), 2.0, 5.0, buffers=2)
    fig = speedup.draw_timeline(bars, "pipeline", unit="ms")
    ax = fig.axes[0]
    assert len(ax.patches) == len(bars)
    end = max(b.end for b in bars)
    assert any(np.allclose(line.get_xdata(), end) for line in ax.lines)
    assert ax.get_xlabel() == "time (ms)"
    plt.close(fig)
    with pytest.raises(ValueError, match="at least one"):
        speedup.draw_timeline([])


@pytest.mark.parametrize("n", [16, 11, 2])
def test_tree_layout_has_one_node_per_addition_and_two_inputs_each(n):
    leaves, adds, edges = speedup.reduction_tree_layout(n)
    assert len(leaves) == n and len(adds) == n - 1 and len(edges) == 2 * (n - 1)
    schedule = gl.perfmodel.reduction_schedule(n, 4)["schedule"]
    assert set(adds) == {a for r in schedule for a in r}
    top = max(adds.values(), key=lambda p: p[1])
    assert top[1] == math.ceil(math.log2(n))


def test_tree_drawing_labels_each_addition_with_its_round():
    fig = speedup.draw_reduction_tree(16, 4)
    ax = fig.axes[0]
    labels = [int(t.get_text()) for t in ax.texts]
    assert len(labels) == 15 and max(labels) == gl.perfmodel.reduction_schedule(16, 4)["rounds"]
    assert "rounds = 5" in ax.get_title()
    plt.close(fig)


def test_amdahl_widget_follows_its_sliders():
    w = speedup.AmdahlExplorer(0.2, 8)
    assert w.state["speedup"] == pytest.approx(gl.perfmodel.amdahl(0.2, 8))
    w.serial.value, w.overhead.value = 0.5, 0.1
    w.speedup.value = 16
    assert w.state["speedup"] == pytest.approx(1 / (0.5 + 0.5 / 16 + 0.1))
    assert w.state["limit"] == pytest.approx(1 / 0.6)
    assert f"{w.state['speedup']:.2f}x" in w.text.value and w.figure.axes[0].get_ylabel()
    w.serial.value, w.overhead.value = 0.0, 0.0
    assert w.state["limit"] == math.inf
