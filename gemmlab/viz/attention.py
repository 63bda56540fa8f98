"""Figures of lesson 16 (fused attention): one row's online softmax stepped through its K/V
tiles, and the tiles a causal kernel computes, masks or skips."""
import numpy as np

from ..attention import online_steps
from .controls import redrawing


def draw_online_step(scores, tile, step):
    """One row's scores, the tiles seen up to ``step`` (0-based) in colour and the rest grey,
    with the running max m and sum l after that tile, and the factor exp(m_old - m_new) that
    rescaled what was summed before. Returns the Figure."""
    import matplotlib.pyplot as plt

    scores = np.asarray(scores, dtype=np.float64).ravel()
    steps = online_steps(scores, tile)
    if not 0 <= step < len(steps):
        raise ValueError(f"step must be between 0 and {len(steps) - 1} for {scores.size} scores "
                         f"in tiles of {tile}, got {step!r}")
    state = steps[step][1]
    before = steps[step - 1][1].m if step else -np.inf
    factor = 0.0 if before == -np.inf else float(np.exp(before - state.m))
    seen = (step + 1) * tile
    fig, ax = plt.subplots(figsize=(8.5, 3.2))
    colours = ["#337ab7" if j < seen - tile else "#d9534f" if j < seen else "#cccccc"
               for j in range(scores.size)]
    ax.bar(np.arange(scores.size), scores, color=colours)
    ax.axhline(state.m, color="#3c9b3c", linestyle="--", label=f"running max m = {state.m:.3g}")
    for edge in range(tile, scores.size, tile):
        ax.axvline(edge - 0.5, color="#888888", linewidth=0.6)
    ax.set_xlabel("key j (tiles of %d; red: this tile, blue: tiles before, grey: not yet read)"
                  % tile)
    ax.set_ylabel("score s_j")
    ax.set_title(f"after tile {step + 1} of {len(steps)}: l = {state.l:.4g}; the sum so far was "
                 f"rescaled by exp(m_old - m_new) = {factor:.3g}", fontsize=10)
    ax.legend(loc="upper left", fontsize=9)
    fig.tight_layout()
    return fig


def online_row_stepper(scores, tile=4):
    """A slider over the tiles of one row: :func:`draw_online_step` redrawn at each step."""
    import ipywidgets as widgets

    count = len(online_steps(scores, tile))
    slider = widgets.IntSlider(value=0, min=0, max=count - 1, description="tile (from 0)")
    return redrawing(lambda step: draw_online_step(scores, tile, step), {"step": slider})


def tile_states(N, Br, Bc, causal):
    """(query tiles x K/V tiles) of 0 (skipped: never loaded), 1 (computed, partly masked) and 2
    (computed, nothing masked)."""
    rows, cols = -(-N // Br), -(-N // Bc)
    states = np.full((rows, cols), 2)
    if causal:
        for a in range(rows):
            last = min((a + 1) * Br, N) - 1
            for b in range(cols):
                first_key, last_key = b * Bc, min((b + 1) * Bc, N) - 1
                states[a, b] = 0 if first_key > last else 1 if last_key > a * Br else 2
    return states


def plot_causal_tiles(N, Br, Bc):
    """The grid of (query tile, K/V tile) pairs of a causal kernel: skipped, masked inside, or
    computed whole. Returns the Figure."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap

    states = tile_states(N, Br, Bc, causal=True)
    fig, ax = plt.subplots(figsize=(4.2, 4.0))
    ax.imshow(states, cmap=ListedColormap(["#eeeeee", "#f0ad4e", "#337ab7"]), vmin=0, vmax=2)
    ax.set_xlabel(f"K/V tile ({Bc} keys)")
    ax.set_ylabel(f"query tile ({Br} rows)")
    counts = [int((states == s).sum()) for s in (2, 1, 0)]
    ax.set_title(f"N = {N}: {counts[0]} whole, {counts[1]} masked inside,\n{counts[2]} skipped "
                 f"(grey)", fontsize=10)
    fig.tight_layout()
    return fig
