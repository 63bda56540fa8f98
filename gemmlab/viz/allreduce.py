"""Figures of the all-reduce lesson: bytes per rank vs N, model time vs N, measured vs fitted."""
import numpy as np

from ..collectives.cost import allreduce_time
from ..collectives.allreduce_command import format_size


# Distinct markers and dashes, so that lines lying on top of each other stay visible.
_STYLES = ("o-", "s--", "^-.", "d:", "v-")


def axes_or_new(ax, figsize=(6.5, 4)):
    """``ax``, or the axes of a new figure of ``figsize`` when it is None."""
    import matplotlib.pyplot as plt
    if ax is None:
        _, ax = plt.subplots(figsize=figsize)
    return ax


def plot_traffic_vs_ranks(ns, series, size_bytes, ax=None):
    """Per-rank byte counts against N, in units of S: ``series`` maps a label to one count per N
    (e.g. the centralized root's sent + received, a ring rank's sent, its sent + received)."""
    ax = axes_or_new(ax)
    for (label, counts), style in zip(series.items(), _STYLES, strict=False):
        ax.plot(ns, np.asarray(counts) / size_bytes, style, label=label)
    ax.axhline(2, color="grey", ls=":", label="2 S")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("number of ranks N")
    ax.set_ylabel("bytes per rank (multiples of S)")
    ax.set_title("Bytes through the busiest rank as N grows")
    ax.legend()
    return ax


def plot_time_vs_ranks(ns, size_bytes, alpha, beta, algorithms=("centralized", "tree", "ring"),
                       ax=None):
    """Model time of each algorithm against N for one message size (alpha in s, beta in s/B)."""
    ax = axes_or_new(ax)
    for name, style in zip(algorithms, _STYLES, strict=False):
        ax.plot(ns, [allreduce_time(name, int(n), size_bytes, alpha, beta) * 1e3 for n in ns],
                style, label=name, markersize=7 if style.startswith("o") else 5)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("number of ranks N")
    ax.set_ylabel("model time (ms)")
    ax.set_title(f"All-reduce of {format_size(size_bytes)}: alpha = {alpha * 1e6:g} us, "
                 f"1/beta = {1 / beta / 1e9:g} GB/s")
    ax.legend()
    return ax


def plot_fit(records, fits, ax=None, title=None):
    """Measured median times (points) and each algorithm's fitted alpha-beta model (lines);
    ``title`` defaults to the MPI run's."""
    ax = axes_or_new(ax)
    for fit in fits:
        mine = [r for r in records if r["algorithm"] == fit.algorithm and r["n_ranks"] == fit.n_ranks]
        sizes = np.array(sorted(r["size_bytes"] for r in mine), dtype=float)
        measured = [r["seconds"] * 1e3 for r in sorted(mine, key=lambda r: r["size_bytes"])]
        line, = ax.plot(sizes, measured, "o", label=f"{fit.algorithm} measured")
        grid = np.geomspace(sizes.min(), sizes.max(), 50)
        ax.plot(grid, [fit.predict(s) * 1e3 for s in grid], "-", color=line.get_color(),
                label=f"{fit.algorithm} model: {fit.alpha * 1e6:.0f} us/step, "
                      f"{fit.bandwidth:.2g} GB/s")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("bytes per rank")
    ax.set_ylabel("time (ms)")
    ax.set_title(title or f"MPI all-reduce on {fits[0].n_ranks} processes: measured vs "
                          f"alpha-beta fit")
    ax.legend(fontsize=8)
    return ax
