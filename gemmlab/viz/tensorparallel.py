"""Figures for tensor parallelism: how ``Y = X W`` is cut over ranks (column vs row parallel), and
bar charts of the bytes each rank sends.

Shapes are drawn to scale (one unit per row or column), each rank in its own colour; a grey block
is replicated on every rank.
"""
from ..parallel.ledger import shape_ledger

REPLICATED = "#bbbbbb"
MODES = ("column", "row")


def rank_colour(r):
    import matplotlib.pyplot as plt
    return plt.get_cmap("tab10")(r % 10)


def _block(ax, x, y, width, height, colour, label=None, alpha=1.0):
    from matplotlib.patches import Rectangle
    ax.add_patch(Rectangle((x, y), width, height, facecolor=colour, edgecolor="black",
                           linewidth=0.8, alpha=alpha))
    if label:
        ax.text(x + width / 2, y + height / 2, label, ha="center", va="center", fontsize=8)


def draw_linear_split(mode, M, K, N, p, ax=None):
    """Draw X (M x K) times W (K x N) and the local results for ``mode`` 'column' or 'row'."""
    import matplotlib.pyplot as plt
    if mode not in MODES:
        raise ValueError(f"mode must be 'column' or 'row', got {mode!r}")
    row = shape_ledger((M, K), (K, N), p)[mode]
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 3))
    gap = max(2, (K + N) // 8)
    x_w, x_y = K + gap, K + N + 2 * gap
    if mode == "column":
        _block(ax, 0, 0, K, M, REPLICATED, "X\n(every rank)")
        for r in range(p):
            _block(ax, x_w + r * (N // p), 0, N // p, K, rank_colour(r), f"W{r}")
            _block(ax, x_y + r * (N // p), 0, N // p, M, rank_colour(r), f"Y{r}")
        merge = "concatenate along N"
    else:
        for r in range(p):
            _block(ax, r * (K // p), 0, K // p, M, rank_colour(r), f"X{r}")
            _block(ax, x_w, r * (K // p), N, K // p, rank_colour(r), f"W{r}")
        shift = min(1.0, M / (2 * p))
        for r in reversed(range(p)):
            _block(ax, x_y + r * shift, r * shift, N, M, rank_colour(r),
                   " + ".join(f"P{i}" for i in range(p)) if r == 0 else None, alpha=0.85)
        merge = "sum over ranks"
    ax.text(K + gap / 2, M / 2, "x", ha="center", va="center", fontsize=12)
    ax.text(K + N + 1.5 * gap, M / 2, "=", ha="center", va="center", fontsize=12)
    ax.set_xlim(-1, x_y + N + p + 2)
    ax.set_ylim(max(M, K) + 1, -1)
    ax.set_aspect("equal")
    ax.set_xlabel("columns (one unit per feature)")
    ax.set_ylabel("rows")
    shape = "{}x{}".format
    ax.set_title(f"{mode} parallel on p = {p}: W_r {shape(*row.W_r)}, local result "
                 f"{shape(*row.local)}, merge: {merge}", fontsize=9)
    return ax.figure


def draw_splits(M, K, N, p):
    """Column and row parallel of the same ``Y = X W`` one above the other."""
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(2, 1, figsize=(9, 6.5))
    for mode, ax in zip(MODES, axes, strict=True):
        draw_linear_split(mode, M, K, N, p, ax=ax)
    fig.tight_layout()
    return fig


def plot_bytes(labels, series, title, ax=None):
    """Grouped bars: ``series`` maps a name to one byte count per label (e.g. per rank count)."""
    import matplotlib.pyplot as plt
    import numpy as np
    if ax is None:
        _, ax = plt.subplots(figsize=(6.5, 3.5))
    x = np.arange(len(labels))
    width = 0.8 / max(1, len(series))
    for i, (name, values) in enumerate(series.items()):
        if len(values) != len(labels):
            raise ValueError(f"series {name!r} has {len(values)} values for {len(labels)} labels")
        ax.bar(x + (i - (len(series) - 1) / 2) * width, values, width, label=name)
    ax.set_xticks(x, [str(label) for label in labels])
    ax.set_ylabel("bytes sent per rank")
    ax.set_title(title)
    ax.legend()
    return ax.figure
