"""The roofline drawn on log-log axes, with kernels placed on it, and a widget that switches
between kernels and reports which roof bounds each one."""
import numpy as np

from ..perfmodel import attainable_flops, ridge_point, roofline_time


def draw_roofline(peak_flops, bandwidth, kernels=None, measured=None, title="", ax=None):
    """Compute roof ``peak_flops`` (FLOP/s) and bandwidth roof ``bandwidth * I`` (B/s x FLOP/B).

    ``kernels``: name -> intensity (FLOP/B); each is drawn on the roof, where the model puts it.
    ``measured``: name -> (intensity, achieved FLOP/s); drawn as crosses below the roof.
    """
    import matplotlib.pyplot as plt

    kernels, measured = dict(kernels or {}), dict(measured or {})
    ridge = ridge_point(peak_flops, bandwidth)
    intensities = [ridge] + list(kernels.values()) + [i for i, _ in measured.values()]
    if any(i <= 0 for i in intensities):
        raise ValueError(f"intensities must be > 0 FLOP/B to go on a log axis, got {intensities}")
    lo, hi = min(intensities) / 4, max(intensities) * 4
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 4.2))
    x = np.logspace(np.log10(lo), np.log10(hi), 300)
    ax.plot(x, attainable_flops(x, peak_flops, bandwidth) / 1e12, color="black", label="roofline")
    ax.axvline(ridge, color="grey", linestyle=":", linewidth=1)
    ax.text(ridge, peak_flops / 1e12 * 1.15, f"ridge {ridge:.2f} FLOP/B", ha="center", fontsize=8)
    for name, i in kernels.items():
        y = attainable_flops(i, peak_flops, bandwidth) / 1e12
        ax.plot([i], [y], "o", markersize=7, label=f"{name}: I = {i:.3g}, <= {y:.3g} TFLOP/s")
    for name, (i, achieved) in measured.items():
        ax.plot([i], [achieved / 1e12], "x", markersize=9, mew=2,
                label=f"{name} (measured): {achieved / 1e12:.3g} TFLOP/s")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(top=peak_flops / 1e12 * 2)
    ax.set_xlabel("arithmetic intensity I (FLOP/B)")
    ax.set_ylabel("attainable performance (TFLOP/s)")
    ax.set_title(title or f"roofline: P = {peak_flops / 1e12:g} TFLOP/s, B = {bandwidth / 1e12:g} TB/s")
    ax.legend(fontsize=7, loc="lower right")
    return ax.figure


class RooflineExplorer:
    """A drop-down of kernels, each given as (FLOPs, bytes); shows the chosen one on the roofline
    with its two time bounds. ``.picker`` is the drop-down, ``.state`` the current numbers."""

    def __init__(self, peak_flops, bandwidth, kernels):
        import ipywidgets as widgets
        if not kernels:
            raise ValueError("RooflineExplorer needs at least one kernel: {name: (flops, bytes)}")
        self.peak, self.bandwidth, self.kernels = peak_flops, bandwidth, dict(kernels)
        self.picker = widgets.Dropdown(options=list(self.kernels), description="kernel")
        self.text = widgets.HTML()
        self.output = widgets.Output()
        self.widget = widgets.VBox([self.picker, self.text, self.output])
        self.picker.observe(lambda change: self.show(), names="value")
        self.show()

    def show(self):
        """Redraw for the kernel currently picked."""
        import matplotlib.pyplot as plt
        from IPython.display import display

        name = self.picker.value
        flops, nbytes = self.kernels[name]
        compute, memory = flops / self.peak, nbytes / self.bandwidth
        time = roofline_time(flops, nbytes, self.peak, self.bandwidth)
        self.state = {"kernel": name, "intensity": flops / nbytes, "time": time,
                      "bound": "compute" if compute >= memory else "bandwidth",
                      "attainable": flops / time}
        self.text.value = (f"<p>{name}: F = {flops:.4g} FLOP, Q = {nbytes:.4g} B, I = "
                           f"{flops / nbytes:.4g} FLOP/B. F/P = {compute * 1e3:.4g} ms, Q/B = "
                           f"{memory * 1e3:.4g} ms, so t >= <b>{time * 1e3:.4g} ms</b> "
                           f"({self.state['bound']}-bound), at most "
                           f"{self.state['attainable'] / 1e12:.4g} TFLOP/s.</p>")
        self.output.clear_output(wait=True)
        with self.output:
            fig = draw_roofline(self.peak, self.bandwidth, {name: flops / nbytes})
            display(fig)
        plt.close(fig)
        self.figure = fig

    def _ipython_display_(self):
        from IPython.display import display
        display(self.widget)
