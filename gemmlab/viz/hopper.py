"""Figures of lesson 12, part 2: the TMA ring of shared-memory slots with its mbarriers, drawn from
the course's pipeline model (``gl.tensorcore.hopper.ring_events``), and a widget to change the
number of stages, the load time, the latency and the compute time."""
from ..tensorcore.hopper import ring_events
from .controls import redrawing

COLOURS = {"flight": "#4c72b0", "full": "#dddddd", "compute": "#dd8452"}


def draw_ring(n, t_load, t_compute, stages, latency=0.0, unit="us", ax=None):
    """One lane per slot: the copy in flight (issue to "full" barrier), the wait for a consumer,
    the wgmma reading the slot (to the "empty" arrival). Each bar is labelled with its K slice
    and the barrier parity of that use. Returns the figure."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    events = ring_events(n, t_load, t_compute, stages, latency)
    if ax is None:
        _, ax = plt.subplots(figsize=(9.5, 0.55 * stages + 1.6))
    for e in events:
        y = e.slot
        ax.barh(y, e.full_at - e.load_start, left=e.load_start, height=0.6,
                color=COLOURS["flight"], edgecolor="black", linewidth=0.4)
        ax.barh(y, e.compute_start - e.full_at, left=e.full_at, height=0.6,
                color=COLOURS["full"], edgecolor="black", linewidth=0.4)
        ax.barh(y, e.empty_at - e.compute_start, left=e.compute_start, height=0.6,
                color=COLOURS["compute"], edgecolor="black", linewidth=0.4)
        ax.text(e.compute_start + (e.empty_at - e.compute_start) / 2, y,
                f"{e.slice}/p{e.phase % 2}", ha="center", va="center", fontsize=7, color="white")
    end = events[-1].empty_at
    ax.axvline(end, color="black", linestyle="--", linewidth=1)
    ax.set_yticks(range(stages), [f"slot {s}" for s in range(stages)])
    ax.set_ylim(stages - 0.4, -0.8)
    ax.set_xlabel(f"time ({unit})")
    ax.set_title(f"{n} K slices, {stages} slot{'s' if stages > 1 else ''}: issue {t_load:g}, "
                 f"latency {latency:g}, wgmma {t_compute:g} {unit}; done at {end:.3g} "
                 f"(compute alone {n * t_compute:.3g})", fontsize=9)
    ax.legend(handles=[Patch(color=COLOURS["flight"], label="TMA copy in flight"),
                       Patch(color=COLOURS["full"], label="full, waiting for wgmma"),
                       Patch(color=COLOURS["compute"], label="wgmma reads it (slice/parity)")],
              loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7)
    ax.figure.tight_layout()
    return ax.figure


def ring_widget(n=12, t_load=0.2, t_compute=0.55, latency=1.0, stages=2):
    """Sliders for the ring's stages, load issue time, latency and compute time."""
    import ipywidgets as widgets

    return redrawing(lambda **values: draw_ring(n, **values), dict(
        stages=widgets.IntSlider(value=stages, min=1, max=6, description="stages"),
        t_load=widgets.FloatSlider(value=t_load, min=0.05, max=2, step=0.05, description="issue"),
        latency=widgets.FloatSlider(value=latency, min=0, max=3, step=0.1, description="latency"),
        t_compute=widgets.FloatSlider(value=t_compute, min=0.05, max=2, step=0.05,
                                      description="wgmma")))
