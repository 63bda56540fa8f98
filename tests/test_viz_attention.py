"""gemmlab/viz/attention.py: the online-softmax stepper shows the state of the module it draws,
and the causal tile grid counts what gl.attention.kv_tiles_visited counts."""
import matplotlib
import pytest

from gemmlab.attention import kv_tiles_visited, online_steps
from gemmlab.viz import attention

matplotlib.use("Agg")
SCORES = [0.5, 2.0, -1.0, 3.0, 7.0, 1.0, 0.0, 6.5, 2.5]


def test_each_step_shows_the_running_max_and_sum_after_that_tile():
    for step, (_, state) in enumerate(online_steps(SCORES, 4)):
        fig = attention.draw_online_step(SCORES, 4, step)
        ax = fig.axes[0]
        assert f"l = {state.l:.4g}" in ax.get_title()
        assert ax.get_legend().get_texts()[0].get_text().endswith(f"{state.m:.3g}")
        seen = sum(p.get_facecolor() != (0.8, 0.8, 0.8, 1.0) for p in ax.patches)
        assert seen == min((step + 1) * 4, len(SCORES))


def test_a_step_past_the_last_tile_is_refused():
    with pytest.raises(ValueError, match="between 0 and 2"):
        attention.draw_online_step(SCORES, 4, 3)


@pytest.mark.parametrize("N, Br, Bc", [(4096, 128, 128), (37, 8, 8), (50, 16, 8)])
def test_the_causal_grid_skips_what_the_model_skips(N, Br, Bc):
    states = attention.tile_states(N, Br, Bc, causal=True)
    assert int((states > 0).sum()) == kv_tiles_visited(N, Br, Bc, causal=True)
    assert (attention.tile_states(N, Br, Bc, causal=False) == 2).all()


def test_the_stepper_is_a_widget_with_one_slider_per_tile():
    box = attention.online_row_stepper(SCORES, 4)
    slider = box.children[0].children[0]
    assert (slider.min, slider.max) == (0, 2)
