"""Figures of parallel time: Gantt charts of timelines (the grouping activity, load/compute
pipelines), the reduction tree coloured by the round each addition runs in, and an Amdahl widget."""
import math

import numpy as np

from ..perfmodel import amdahl, reduction_schedule

KIND_COLOURS = {"compute": "#4c72b0", "wait": "#dddddd", "send": "#dd8452", "merge": "#55a868",
                "load": "#c44e52"}


def draw_timeline(intervals, title="", unit="time units", ax=None):
    """A Gantt chart of :class:`gemmlab.perfmodel.Interval` bars, one row per lane (first lane
    on top), coloured by kind; the end time is marked."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    intervals = list(intervals)
    if not intervals:
        raise ValueError("draw_timeline needs at least one interval")
    lanes = list(dict.fromkeys(bar.lane for bar in intervals))
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 0.55 * len(lanes) + 1.4))
    end = max(bar.end for bar in intervals)
    for bar in intervals:
        y = lanes.index(bar.lane)
        ax.barh(y, bar.end - bar.start, left=bar.start, height=0.6,
                color=KIND_COLOURS.get(bar.kind, "#8172b3"), edgecolor="black", linewidth=0.4)
        wide_enough = bar.end - bar.start >= 0.02 * end * max(len(bar.label), 1)
        if bar.kind != "wait" and wide_enough:
            ax.text((bar.start + bar.end) / 2, y, bar.label, ha="center", va="center",
                    fontsize=7, color="white")
    ax.axvline(end, color="black", linestyle="--", linewidth=1)
    ax.text(end, -0.6, f" {end:g}", va="bottom", fontsize=8)
    ax.set_yticks(range(len(lanes)), lanes)
    ax.set_ylim(len(lanes) - 0.4, -0.8)
    ax.set_xlabel(f"time ({unit})")
    ax.set_title(title)
    kinds = list(dict.fromkeys(bar.kind for bar in intervals))
    ax.legend(handles=[Patch(color=KIND_COLOURS.get(k, "#8172b3"), label=k) for k in kinds],
              loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7)
    return ax.figure


def reduction_tree_layout(n_values):
    """Node positions of the balanced pairwise tree: leaves at height 0 and x = 0..n-1, the
    additions of level l at height l + 1 above the middle of their two inputs. Returns
    (leaves, adds, edges): ``adds`` maps (level, index) to (x, y); ``edges`` are point pairs."""
    items = [(float(x), 0.0) for x in range(n_values)]
    leaves, adds, edges, level = list(items), {}, [], 0
    while len(items) > 1:
        nxt = []
        for i in range(len(items) // 2):
            left, right = items[2 * i], items[2 * i + 1]
            node = ((left[0] + right[0]) / 2, level + 1.0)
            adds[(level, i)] = node
            edges += [(left, node), (right, node)]
            nxt.append(node)
        if len(items) % 2:
            nxt.append(items[-1])          # the odd one out waits for the next level
        items, level = nxt, level + 1
    return leaves, adds, edges


def draw_reduction_tree(n_values, processors, ax=None):
    """The sum of ``n_values`` numbers as a DAG, each addition labelled with the round the greedy
    level-by-level schedule on ``processors`` gives it."""
    import matplotlib.pyplot as plt

    result = reduction_schedule(n_values, processors)
    round_of = {add: r for r, adds in enumerate(result["schedule"]) for add in adds}
    leaves, adds, edges = reduction_tree_layout(n_values)
    if ax is None:
        _, ax = plt.subplots(figsize=(max(6, 0.5 * n_values), 1.2 * result["span"] + 1.8))
    for (x0, y0), (x1, y1) in edges:
        ax.plot([x0, x1], [y0, y1], color="#999999", linewidth=0.8, zorder=1)
    ax.scatter(*zip(*leaves, strict=True), s=120, color="white", edgecolor="black", zorder=2)
    colours = plt.get_cmap("tab10")
    for add, (x, y) in adds.items():
        r = round_of[add]
        ax.scatter([x], [y], s=260, color=colours(r % 10), edgecolor="black", zorder=2)
        ax.text(x, y, str(r + 1), ha="center", va="center", fontsize=8, color="white", zorder=3)
    ax.set_xticks([])
    ax.set_yticks(range(result["span"] + 1), ["inputs"] + [f"level {l + 1}" for l in range(result["span"])])
    ax.set_xlabel("input values (each addition is labelled with the round it runs in)")
    ax.set_title(f"{n_values} numbers on {processors} processors: W = {result['work']}, "
                 f"D = {result['span']}, rounds = {result['rounds']}, "
                 f"lower bound max(W/p, D) = {result['lower_bound']:g}", fontsize=9)
    return ax.figure


class AmdahlExplorer:
    """Sliders for the fraction of the time left unaccelerated, the speedup of the rest and any
    added overhead; shows the overall speedup, its limit, and the curve over speedups.
    ``.serial``, ``.speedup``, ``.overhead`` are the sliders; ``.state`` the current numbers."""

    def __init__(self, serial_fraction=0.2, speedup=8.0, overhead=0.0):
        import ipywidgets as widgets
        amdahl(serial_fraction, speedup, overhead)       # validates the starting values
        self.serial = widgets.FloatSlider(value=serial_fraction, min=0.0, max=1.0, step=0.01,
                                          description="s (not sped up)")
        self.speedup = widgets.FloatLogSlider(value=speedup, base=2, min=0, max=10, step=0.25,
                                              description="p (speedup)")
        self.overhead = widgets.FloatSlider(value=overhead, min=0.0, max=0.5, step=0.01,
                                            description="overhead")
        self.text = widgets.HTML()
        self.output = widgets.Output()
        self.widget = widgets.VBox([self.serial, self.speedup, self.overhead, self.text, self.output])
        for slider in (self.serial, self.speedup, self.overhead):
            slider.observe(lambda change: self.show(), names="value")
        self.show()

    def show(self):
        """Recompute and redraw for the sliders' current values."""
        import matplotlib.pyplot as plt
        from IPython.display import display

        s, p, h = self.serial.value, self.speedup.value, self.overhead.value
        overall = amdahl(s, p, h)
        limit = amdahl(s, math.inf, h)
        self.state = {"speedup": overall, "limit": limit, "time_fraction": 1 / overall}
        self.text.value = (f"<p>time = s + (1 - s)/p + overhead = {s:.2f} + {1 - s:.2f}/{p:.3g} + "
                           f"{h:.2f} = <b>{1 / overall:.3f}</b> of the baseline; overall speedup "
                           f"<b>{overall:.2f}x</b>; limit as p grows: {limit:.2f}x</p>")
        self.output.clear_output(wait=True)
        with self.output:
            fig, ax = plt.subplots(figsize=(6, 3.2))
            ps = np.logspace(0, 10, 200, base=2)
            ax.plot(ps, [amdahl(s, x, h) for x in ps], label="overall speedup")
            ax.plot([p], [overall], "o", color="black")
            if math.isfinite(limit):
                ax.axhline(limit, linestyle="--", color="grey", label=f"limit {limit:.2f}x")
            ax.set_xscale("log", base=2)
            ax.set_xlabel("speedup p of the accelerated part (x)")
            ax.set_ylabel("overall speedup (x)")
            ax.set_title(f"Amdahl's law, s = {s:.2f}, overhead = {h:.2f}")
            ax.legend(fontsize=8)
            display(fig)
        plt.close(fig)
        self.figure = fig

    def _ipython_display_(self):
        from IPython.display import display
        display(self.widget)
