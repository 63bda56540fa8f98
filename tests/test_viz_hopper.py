"""The TMA ring figure and widget of lesson 12, part 2."""
import matplotlib
import pytest

matplotlib.use("Agg")

from gemmlab.tensorcore import hopper          # noqa: E402
from gemmlab.viz import hopper as hopper_viz    # noqa: E402


def test_ring_draws_one_lane_per_slot_and_three_bars_per_slice():
    fig = hopper_viz.draw_ring(10, 0.2, 0.55, stages=3, latency=1.0)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["slot 0", "slot 1", "slot 2"]
    assert len(ax.patches) == 3 * 10
    end = hopper.ring_events(10, 0.2, 0.55, 3, 1.0)[-1].empty_at
    assert f"done at {end:.3g}" in ax.get_title()


def test_ring_widget_redraws_when_the_stages_change():
    box = hopper_viz.ring_widget(n=6, stages=2)
    stages = next(w for w in box.children[0].children if w.description == "stages")
    stages.value = 4
    assert stages.value == 4 and len(box.children) == 2


def test_a_ring_needs_a_positive_number_of_stages():
    with pytest.raises(ValueError, match="buffers"):
        hopper_viz.draw_ring(4, 0.2, 0.5, stages=0)
