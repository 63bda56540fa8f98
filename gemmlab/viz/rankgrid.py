"""A drawing of a 4D rank grid that highlights one rank's TP, CP, DP and PP groups, and a widget
to pick the rank.

Layout: each small block is one (dp, pp) pair, with tp across and cp down inside it; blocks are
placed dp across and pp down. A rank shares exactly one coordinate-walk with each group member,
so every other rank is in at most one of the chosen rank's four groups and gets that group's
colour.
"""
from ..parallel.grid import AXES, AXIS_NAMES

COLOURS = {"tp": "#4c72b0", "cp": "#dd8452", "dp": "#55a868", "pp": "#c44e52"}
OTHER = "#e8e8e8"


def highlighted(grid, rank):
    """The chosen rank's groups, axis by axis, as ``RankGrid.group`` gives them."""
    return {axis: grid.group(axis, rank) for axis in AXES}


def roles(grid, rank):
    """For every rank of the grid: "self", the axis of the chosen rank's group it belongs to, or
    None when it shares none of them."""
    result = {r: None for r in range(grid.size)}
    for axis, members in highlighted(grid, rank).items():
        for r in members:
            result[r] = axis
    result[rank] = "self"
    return result


def cell_position(grid, rank, gap=1):
    """(x, y) of a rank's cell: tp across and cp down within its block; blocks dp across and pp
    down, ``gap`` cells apart."""
    c = grid.coords(rank)
    x = c.dp * (grid.sizes["tp"] + gap) + c.tp
    y = c.pp * (grid.sizes["cp"] + gap) + c.cp
    return x, y


def draw_rankgrid(grid, rank, ax=None):
    """Draw every rank as a numbered square, coloured by which of ``rank``'s groups it is in."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch, Rectangle

    if ax is None:
        width = grid.sizes["dp"] * (grid.sizes["tp"] + 1)
        height = grid.sizes["pp"] * (grid.sizes["cp"] + 1)
        _, ax = plt.subplots(figsize=(min(2 + 0.45 * width, 16), 1.6 + 0.45 * height))
    kinds = roles(grid, rank)
    for r, kind in kinds.items():
        x, y = cell_position(grid, r)
        colour = "white" if kind == "self" else COLOURS.get(kind, OTHER)
        ax.add_patch(Rectangle((x, y), 0.92, 0.92, facecolor=colour,
                               edgecolor="black", linewidth=2.5 if kind == "self" else 0.5))
        ax.text(x + 0.46, y + 0.46, str(r), ha="center", va="center",
                fontsize=8, color="black" if kind in (None, "self") else "white")
    for dp in range(grid.sizes["dp"]):
        ax.text(dp * (grid.sizes["tp"] + 1) + grid.sizes["tp"] / 2, -0.3, f"dp = {dp}",
                ha="center", va="bottom", fontsize=8)
    for pp in range(grid.sizes["pp"]):
        ax.text(-0.3, pp * (grid.sizes["cp"] + 1) + grid.sizes["cp"] / 2, f"pp = {pp}",
                ha="right", va="center", fontsize=8)
    x_max = grid.sizes["dp"] * (grid.sizes["tp"] + 1)
    y_max = grid.sizes["pp"] * (grid.sizes["cp"] + 1)
    ax.set_xlim(-2, x_max)
    ax.set_ylim(y_max, -1.2)
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_xlabel("tp coordinate (across, within each block)")
    ax.set_ylabel("cp coordinate (down)")
    c = grid.coords(rank)
    ax.set_title(f"{grid!r}\nrank {rank} at (tp, cp, dp, pp) = {tuple(c)}", fontsize=9)
    ax.legend(handles=[Patch(facecolor=COLOURS[a], label=f"{a.upper()} group ({AXIS_NAMES[a]})")
                       for a in AXES], loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
    return ax.figure


def rankgrid_explorer(grid, rank=0):
    """A widget: a slider picks a rank; the drawing and the list of its four groups follow."""
    return RankGridExplorer(grid, rank)


def _describe(grid, rank):
    rows = "".join(f"<li><b>{axis.upper()}</b> group: {members}</li>"
                   for axis, members in highlighted(grid, rank).items())
    return f"<p>rank {rank} = {tuple(grid.coords(rank))} (tp, cp, dp, pp)</p><ul>{rows}</ul>"


class RankGridExplorer:
    """Slider + drawing + group list. ``.picker`` is the slider, ``.groups`` the highlighted
    groups of the current rank, ``.widget`` what a notebook displays (it also displays itself)."""

    def __init__(self, grid, rank=0):
        import ipywidgets as widgets
        self.grid = grid
        self.picker = widgets.IntSlider(value=rank, min=0, max=grid.size - 1, description="rank")
        self.text = widgets.HTML()
        self.output = widgets.Output()
        self.widget = widgets.VBox([self.picker, self.text, self.output])
        self.picker.observe(lambda change: self.show(change["new"]), names="value")
        self.show(rank)

    def show(self, rank):
        """Highlight ``rank``'s groups (also what moving the slider does)."""
        import matplotlib.pyplot as plt
        from IPython.display import display
        self.groups = highlighted(self.grid, rank)
        self.text.value = _describe(self.grid, rank)
        self.output.clear_output(wait=True)
        with self.output:
            fig = draw_rankgrid(self.grid, rank)
            display(fig)
        plt.close(fig)
        self.figure = fig

    def _ipython_display_(self):
        from IPython.display import display
        display(self.widget)
