"""Lesson 01's summation-error figure: relative error against n for sequential, pairwise and Kahan
summation in FP16, BF16 and FP32, beside the textbook bounds (n-1)u, ceil(log2 n)u and 2u."""
import numpy as np

from .. import precision as P

ORDER_COLOURS = {"sequential": "#d9534f", "pairwise": "#337ab7", "kahan": "#3c9b3c"}


def plot_summation_errors(data=None, accs=("fp16", "bf16", "fp32"), ns=None, seed=0):
    """One log-log panel per accumulator: measured relative error |computed - exact| / sum|x|
    (markers, solid) and the first-order bound (dashed, same colour) for each order.

    ``data`` is the dict of :func:`gemmlab.precision.summation_errors` (computed here when None).
    Exact results (error 0) cannot be drawn on a log axis and are left out. Returns the Figure.
    """
    import matplotlib.pyplot as plt

    if data is None:
        data = P.summation_errors(ns=ns, accs=accs, seed=seed)
    accs = [a for a in accs if any(k[0] == a for k in data["errors"])]
    if not accs:
        raise ValueError("data holds none of the requested accumulators")
    orders = [o for o in P.ORDERS if (accs[0], o) in data["errors"]]
    n = np.asarray(data["n"])
    fig, axes = plt.subplots(1, len(accs), figsize=(4.6 * len(accs), 4.0), sharey=True,
                             squeeze=False)
    for ax, acc in zip(axes[0], accs, strict=True):
        u = data["u"][acc]
        for order in orders:
            err = np.asarray(data["errors"][acc, order], dtype=float)
            shown = np.where(err > 0, err, np.nan)
            colour = ORDER_COLOURS[order]
            ax.plot(n, shown, "o-", color=colour, ms=4, label=f"{order}")
            ax.plot(n, data["bounds"][acc, order], "--", color=colour, lw=1,
                    label=f"{order} bound")
        ax.axhline(u, color="grey", lw=0.8, ls=":")
        ax.text(n[0], u * 1.3, "u", color="grey")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(f"{acc} accumulator (u = 2^{int(np.log2(u))})")
        ax.set_xlabel("n (values summed)")
        ax.grid(True, which="major", alpha=0.3)
    axes[0][0].set_ylabel("relative error  |s - exact| / sum|x|")
    axes[0][0].set_ylim(1e-9, 1e3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=2 * len(orders), fontsize=8)
    fig.suptitle("Summation error of uniform [0, 1) data against n, beside the textbook bounds")
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fig
