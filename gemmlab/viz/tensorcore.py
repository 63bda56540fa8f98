"""Figures of lesson 12 (Tensor Cores): the 128 / 32 / 16 hierarchy, which warp owns which
fragment, mixed-precision error against K (with a widget), and measured throughput."""
import numpy as np

from ..tensorcore import emulation, numerics, tiling
from .controls import redrawing

SERIES = {   # key of error_vs_k: (label, colour, line style)
    "fp16_fp32acc": ("FP16 in, FP32 accumulate", "#4c72b0", "-"),
    "fp16_fp16acc": ("FP16 in, FP16 accumulate", "#c44e52", "-"),
    "bf16_fp32acc": ("BF16 in, FP32 accumulate", "#55a868", "-"),
    "fp16_input": ("rounding the inputs to FP16", "#4c72b0", ":"),
    "bf16_input": ("rounding the inputs to BF16", "#55a868", ":"),
}
FLOOR = 1e-12        # zero errors are drawn here on the log axis


def draw_hierarchy(n=128, tile=32, frag=16, ax=None):
    """Left: an n x n C cut into tile x tile SRAM tiles. Right: one tile cut into frag x frag
    fragments, one warp each. Returns the figure."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    h = tiling.hierarchy(n, tile, frag)
    if ax is None:
        _, ax = plt.subplots(1, 2, figsize=(9, 4.2))
    side = n // tile
    for i in range(side):
        for j in range(side):
            ax[0].add_patch(Rectangle((j * tile, n - (i + 1) * tile), tile, tile, edgecolor="black",
                                      facecolor="#c44e52" if (i, j) == (0, 0) else "white"))
    ax[0].set_title(f"C, {n} x {n}: {h['c_tiles']} SRAM tiles of {tile} x {tile}")
    fs = tile // frag
    colours = [f"C{k}" for k in range(fs * fs)]
    for i in range(fs):
        for j in range(fs):
            k = i * fs + j
            ax[1].add_patch(Rectangle((j * frag, tile - (i + 1) * frag), frag, frag,
                                      edgecolor="black", facecolor=colours[k], alpha=0.7))
            ax[1].text(j * frag + frag / 2, tile - (i + 0.5) * frag, f"warp {k}\n{frag} x {frag}",
                       ha="center", va="center", fontsize=9)
    ax[1].set_title(f"one tile: {h['fragments_per_tile']} fragments, one warp each\n"
                    f"({h['mma_steps_per_tile_pair']} MMA steps per fragment per tile pair)")
    for a, size in ((ax[0], n), (ax[1], tile)):
        a.set_xlim(0, size)
        a.set_ylim(0, size)
        a.set_aspect("equal")
        a.set_xlabel("column of C (elements)")
        a.set_ylabel("row of C (elements, from the bottom)")
    ax[0].figure.tight_layout()
    return ax[0].figure


def draw_ownership(t=tiling.LESSON, ax=None):
    """The block tile of ``t`` coloured by owning warp, with fragment borders. Returns the figure."""
    import matplotlib.pyplot as plt

    t = tiling.get_tiling(t)
    warp, frag = emulation.ownership(t.block_m, t.block_n, t)
    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 5.5 * t.block_m / t.block_n + 0.6))
    ax.imshow(warp, cmap="tab10", vmin=0, vmax=9, interpolation="nearest",
              extent=(0, t.block_n, t.block_m, 0))
    for x in range(0, t.block_n + 1, tiling.FRAG):
        ax.axvline(x, color="white", linewidth=0.6)
    for y in range(0, t.block_m + 1, tiling.FRAG):
        ax.axhline(y, color="white", linewidth=0.6)
    for w in range(t.warps):
        rows, cols = np.nonzero(warp == w)
        ax.text(cols.mean() + 0.5, rows.mean() + 0.5, f"warp {w}", ha="center", va="center",
                fontsize=8, color="white", weight="bold")
    ax.set_title(f"{t.name}: {t.block_m} x {t.block_n} block tile\n{t.warps} warps x "
                 f"{t.frags_m * t.frags_n} fragment(s) of 16 x 16", fontsize=10)
    ax.set_xlabel("column in the block tile (elements)")
    ax.set_ylabel("row in the block tile (elements)")
    return ax.figure


def draw_error_vs_k(results, measured=None, ax=None, bounds=True):
    """Log-log plot of :func:`gemmlab.tensorcore.error_vs_k` results; ``measured`` (same keys,
    from a GPU record) is drawn as markers. Returns the figure."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(8, 4.6))
    ks = np.asarray(results["K"])
    for key, (label, colour, style) in SERIES.items():
        if key in results:
            ax.plot(ks, np.maximum(results[key], FLOOR), style, color=colour, marker=".",
                    label=label + " (model)")
    if measured:
        mk = np.asarray(measured["K"])
        for key in ("fp16_fp32acc", "fp16_fp16acc", "bf16_fp32acc"):
            if key in measured:
                label, colour, _ = SERIES[key]
                ax.plot(mk, np.maximum(measured[key], FLOOR), "o", color=colour, mfc="none",
                        markersize=8, label=label + " (measured on the GPU)")
    if bounds:
        for acc, colour in (("fp32", "#4c72b0"), ("fp16", "#c44e52")):
            ax.plot(ks, [numerics.accumulation_bound(int(k), acc) for k in ks], "--",
                    color=colour, alpha=0.5, linewidth=1, label=f"bound ceil(K/16) u_{acc}")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("K (length of each dot product)")
    ax.set_ylabel("median |error| / sum |a_k b_k|")
    ax.set_title(f"Mixed-precision error against K ({results.get('inputs', '')} inputs; "
                 f"zeros drawn at {FLOOR:g})")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.figure.tight_layout()
    return ax.figure


def error_widget(max_log2_k=14, trials=32):
    """Input kind and largest K as controls, redrawing :func:`draw_error_vs_k`. Returns the box."""
    import ipywidgets as widgets

    def draw(kind, top):
        ks = [2 ** e for e in range(4, top + 1, 2)]
        draw_error_vs_k(numerics.error_vs_k(ks, kind, trials, seed=0))

    return redrawing(draw, dict(
        kind=widgets.Dropdown(options=list(numerics.INPUT_KINDS), value="positive",
                              description="inputs"),
        top=widgets.IntSlider(value=min(12, max_log2_k), min=5, max=max_log2_k,
                              description="log2 max K")))


def draw_performance(rows, title, ax=None):
    """Horizontal bars of TFLOP/s per kernel (rows as in a benchmark record). Returns the figure."""
    import matplotlib.pyplot as plt

    rows = [r for r in rows if "tflops" in r]
    if not rows:
        raise ValueError("no timing rows to draw")
    rows = sorted(rows, key=lambda r: r["tflops"])
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 0.32 * len(rows) + 1.2))
    colours = ["#c44e52" if r["kernel"].startswith("wmma") else
               "#8c8c8c" if r["kernel"].startswith("cublas") else "#4c72b0" for r in rows]
    ax.barh([r["kernel"] for r in rows], [r["tflops"] for r in rows], color=colours)
    for y, r in enumerate(rows):
        ax.text(r["tflops"], y, f" {r['tflops']:.1f}", va="center", fontsize=8)
    ax.set_xlabel("TFLOP/s (2 M N K / median time)")
    ax.set_title(title)
    ax.figure.tight_layout()
    return ax.figure
