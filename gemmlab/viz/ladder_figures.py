"""What the GEMM-ladder lessons (05, 08, 10, 11) share: their set-up, the GPU run recorded in
``benchmarks/``, and their figures (the output-tile grid, the single vs double buffer timeline with
its widget, the ladder bar chart of benchmark results, two kernels compared at equal tiles)."""
from dataclasses import dataclass

import numpy as np

from .. import device, measure
from ..perfmodel import pipeline_schedule, pipeline_time
from .controls import redrawing

COLOURS = {"load": "#4c72b0", "compute": "#dd8452"}
LADDER_RECORD = "gpu_ladder.json"       # written by benchmarks/gpu_ladder.sh
RECORDED_SHAPE = (4096, 4096, 4096)     # the shape the lessons quote from it


def lesson_setup(seed=5):
    """(sizes, on_gpu, n, rng): this backend's problem sizes, whether it is a GPU, the square size
    the ladder lessons run and time (16 on the simulator, 4096 on a GPU) and a seeded generator.
    Prints the backend and n."""
    sizes = device.sizes()
    n = sizes["gemm_n"]
    print(f"backend: {device.backend()}, n = {n}")
    return sizes, device.backend() == "gpu", n, np.random.default_rng(seed)


@dataclass(frozen=True)
class RecordedRun:
    """A ``gemmlab bench`` run saved in ``benchmarks/``, read at one (M, N, K) shape."""
    machine: dict
    results: list
    shape: tuple

    @property
    def rows(self):
        """The result rows at :attr:`shape`."""
        return [r for r in self.results if (r["M"], r["N"], r["K"]) == self.shape]

    @property
    def tflops(self):
        """{kernel: TFLOP/s} at :attr:`shape`."""
        return speedups(self.results, self.shape)

    @property
    def note(self):
        """Where and when it was measured, for a figure's title."""
        return f"recorded on {self.machine['gpu']}, {self.machine['date'][:10]}"

    @property
    def sm(self):
        """The per-SM limits of the GPU it was recorded on (from its compute capability)."""
        from ..perfmodel import sm_resources
        return sm_resources(self.machine["compute_capability"])


def recorded_run(name=LADDER_RECORD, shape=RECORDED_SHAPE):
    """The run saved as ``benchmarks/<name>``, or None when none has been recorded yet."""
    data = measure.recorded(name, required=("machine", "results"))
    return None if data is None else RecordedRun(data["machine"], data["results"], tuple(shape))


def show_recorded(shape=RECORDED_SHAPE, name=LADDER_RECORD):
    """Print the TFLOP/s the recorded GPU run measured at ``shape``, with its machine, and return
    it (a :class:`RecordedRun`); print how to record one and return None when there is none."""
    run = recorded_run(name, shape)
    if run is None:
        print(f"No recorded GPU run in benchmarks/{name} yet: "
              f"run benchmarks/gpu_ladder.sh on a GPU.")
        return None
    M, N, K = run.shape
    print(f"Recorded on {run.machine['gpu']} ({run.machine['date'][:10]}), "
          f"{run.machine['timing']}, TFLOP/s at {M} x {N} x {K}:")
    print({k: round(v, 2) for k, v in run.tflops.items()})
    return run


def draw_tile_grid(n, T, I=0, J=0, ax=None):
    """A, B and C of side n cut into T x T tiles; C tile (I, J) and the A row-tiles and B
    column-tiles it needs along K are coloured. Returns the figure."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    if n % T or not (0 <= I < n // T and 0 <= J < n // T):
        raise ValueError(f"need T dividing n and 0 <= I, J < n/T, got n={n}, T={T}, I={I}, J={J}")
    tiles = n // T
    if ax is None:
        _, ax = plt.subplots(1, 3, figsize=(10, 3.4))
    roles = (("A", lambda i, j: i == I, "#4c72b0"), ("B", lambda i, j: j == J, "#55a868"),
             ("C", lambda i, j: (i, j) == (I, J), "#c44e52"))
    for axis, (name, used, colour) in zip(ax, roles, strict=True):
        for i in range(tiles):
            for j in range(tiles):
                axis.add_patch(Rectangle((j, tiles - 1 - i), 1, 1, edgecolor="black",
                                         facecolor=colour if used(i, j) else "white", alpha=0.8))
        axis.set_xlim(0, tiles)
        axis.set_ylim(0, tiles)
        axis.set_aspect("equal")
        axis.set_xticks([])
        axis.set_yticks([])
        axis.set_title(f"{name}: {tiles} x {tiles} tiles of {T} x {T}")
    ax[0].figure.suptitle(f"n = {n}, T = {T}: C tile ({I}, {J}) needs {tiles} A tiles and "
                          f"{tiles} B tiles along K")
    ax[0].figure.tight_layout()
    return ax[0].figure


def draw_pipeline(n, t_load, t_compute, unit="us", ax=None):
    """Gantt chart of n load/compute stages with one buffer (top) and two (bottom)."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(9, 3.2))
    rows = {}
    for y, buffers in ((1, 1), (0, 2)):
        for bar in pipeline_schedule(n, t_load, t_compute, buffers):
            lane_y = y * 3 + (1 if bar.lane == "load" else 0)
            ax.barh(lane_y, bar.end - bar.start, left=bar.start, color=COLOURS[bar.kind],
                    edgecolor="black", height=0.8)
            ax.text((bar.start + bar.end) / 2, lane_y, bar.label.replace("batch ", ""),
                    ha="center", va="center", fontsize=8, color="white")
        rows[buffers] = pipeline_time(n, t_load, t_compute, buffers)
    ax.set_yticks([0, 1, 3, 4], ["compute", "load", "compute", "load"])
    ax.text(0, 5.0, f"1 buffer: n(L+C) = {rows[1]:g} {unit}", fontsize=9)
    ax.text(0, 2.0, f"2 buffers: L + (n-1) max(L,C) + C = {rows[2]:g} {unit}", fontsize=9)
    ax.set_ylim(-0.7, 5.6)
    ax.set_xlabel(f"time ({unit})")
    ax.set_title(f"n = {n} K-tiles, load L = {t_load:g} {unit}, compute C = {t_compute:g} {unit}")
    return ax.figure


def pipeline_widget(n=4, t_load=8.0, t_compute=12.0):
    """Sliders for n, T_L and T_C redrawing :func:`draw_pipeline`; returns the widget box."""
    import ipywidgets as widgets

    return redrawing(draw_pipeline, dict(
        n=widgets.IntSlider(value=n, min=1, max=10, description="tiles n"),
        t_load=widgets.FloatSlider(value=t_load, min=1, max=30, step=1, description="T_L (us)"),
        t_compute=widgets.FloatSlider(value=t_compute, min=1, max=30, step=1,
                                      description="T_C (us)")))


def draw_ladder(results, shape, ax=None, note=""):
    """Bars of TFLOP/s per kernel at one (M, N, K) from ``gl.bench`` results, cuBLAS as a line."""
    import matplotlib.pyplot as plt

    rows = [r for r in results if (r["M"], r["N"], r["K"]) == tuple(shape)]
    if not rows:
        raise ValueError(f"no results at shape {tuple(shape)}")
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 3.6))
    rungs = [r for r in rows if r["kernel"] != "cublas"]
    labels = [r["kernel"] for r in rungs]
    values = [r["tflops"] for r in rungs]
    ax.bar(labels, values, color="#4c72b0")
    for x, r in enumerate(rungs):
        pct = f"\n{r['pct_of_cublas']:.0f}% of cuBLAS" if r["pct_of_cublas"] else ""
        ax.text(x, r["tflops"], f"{r['tflops']:.3g}{pct}", ha="center", va="bottom", fontsize=8)
    cublas = [r for r in rows if r["kernel"] == "cublas"]
    if cublas:
        ax.axhline(cublas[0]["tflops"], color="#c44e52", linestyle="--",
                   label=f"cuBLAS SGEMM {cublas[0]['tflops']:.3g} TFLOP/s")
        ax.legend(loc="upper left", fontsize=8)
    ax.set_ylim(0, 1.25 * max(values + [r["tflops"] for r in cublas]))
    ax.set_ylabel("TFLOP/s (FP32)")
    ax.set_title(f"GEMM ladder at {shape[0]} x {shape[1]} x {shape[2]}" + (f" ({note})" if note else ""))
    return ax.figure


def occupancy_rows(results, kernels, sm):
    """One dict per result row of ``kernels`` with registers: kernel, regs, smem_bytes, blocks (per
    SM), limit (the resource that binds, by the model on ``sm``) and source. A live GPU row brings
    the driver's own count (``bench.run``'s "blocks_per_sm"); a recorded row without one gets the
    model's on ``sm``, the limits of the GPU that recorded it (:attr:`RecordedRun.sm`)."""
    from .. import kernels as ladder, perfmodel

    rows = []
    for r in results:
        if r["kernel"] not in kernels or not r.get("regs"):
            continue
        threads = ladder.get(r["kernel"]).plan(**r["tiles"]).threads
        model, limit = perfmodel.blocks_per_sm(r["regs"], threads, r["smem_bytes"], sm)
        driver = r.get("blocks_per_sm")
        rows.append({"kernel": r["kernel"], "tiles": r["tiles"], "regs": r["regs"],
                     "smem_bytes": r["smem_bytes"], "blocks": model if driver is None else driver,
                     "model": model, "limit": limit,
                     "source": f"model, {sm.name}" if driver is None else "the driver's occupancy "
                                                                          "calculator"})
    return rows


def tile_pairs(results, kernels=("outer", "twolevel"), sm=None):
    """Rows for comparing ``kernels`` at equal tiles: one dict per tile set that every kernel was
    run with, {"tiles", kernel: {"tflops", "regs", "blocks_per_sm"} for each kernel}. Blocks per
    SM: the driver's count for a live GPU run, else the model's on ``sm`` (the limits of the GPU
    that recorded the run, :attr:`RecordedRun.sm`); None without registers (the simulator)."""
    by_tiles = {}
    occupancy = {(r["kernel"], tuple(sorted(r["tiles"].items()))): r["blocks"]
                 for r in (occupancy_rows(results, kernels, sm) if sm else [])}
    for r in results:
        if r["kernel"] in kernels:
            key = tuple(sorted(r["tiles"].items()))
            blocks = r.get("blocks_per_sm") or occupancy.get((r["kernel"], key))
            by_tiles.setdefault(key, {"tiles": dict(key)})[r["kernel"]] = {
                "tflops": r["tflops"], "regs": r.get("regs"), "blocks_per_sm": blocks}
    return [row for row in by_tiles.values() if all(k in row for k in kernels)]


def draw_tile_pairs(rows, kernels=("outer", "twolevel"), ax=None, note=""):
    """Grouped bars of TFLOP/s, one group per tile set of :func:`tile_pairs`, each bar labelled
    with its registers per thread and the blocks per SM they allow."""
    import matplotlib.pyplot as plt

    if not rows:
        raise ValueError("no tile set was run with every kernel")
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 3.6))
    width = 0.8 / len(kernels)
    colors = ("#4c72b0", "#dd8452", "#55a868")
    for i, kernel in enumerate(kernels):
        xs = [g + (i - (len(kernels) - 1) / 2) * width for g in range(len(rows))]
        values = [row[kernel]["tflops"] for row in rows]
        ax.bar(xs, values, width, label=kernel, color=colors[i % len(colors)])
        for x, row in zip(xs, rows, strict=True):
            cell = row[kernel]
            label = f"{cell['tflops']:.3g}"
            if cell["regs"]:
                label += f"\n{cell['regs']} reg\n{cell['blocks_per_sm']} blk/SM"
            ax.text(x, cell["tflops"], label, ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels([f"BM={r['tiles']['BM']} BN={r['tiles']['BN']} BK={r['tiles']['BK']}\n"
                        f"TM={r['tiles']['TM']} TN={r['tiles']['TN']}" for r in rows], fontsize=8)
    ax.set_ylim(0, 1.45 * max(row[k]["tflops"] for row in rows for k in kernels))
    ax.set_ylabel("TFLOP/s (FP32)")
    ax.legend(loc="upper left", fontsize=8)
    ax.set_title("Equal tiles, one kernel against the other" + (f" ({note})" if note else ""))
    return ax.figure


def profiled_steps(record):
    """The steps of a recorded run with a profile (``benchmarks/gpu_fp32.json``), in the order
    they ran: each profile entry (spec, registers, warps, issue rate, FFMA share, stalls) with
    ``pct_of_cublas``, {size: % of cuBLAS} at the square sizes the run timed."""
    from .. import bench, kernels as ladder

    rows = []
    for entry in record["profile"]:
        name, tiles = bench.parse_kernel(entry["spec"])
        tiles = {**ladder.get(name).default_tiles("gpu"), **tiles}
        pct = {r["M"]: r["pct_of_cublas"] for r in record["results"]
               if r["kernel"] == name and r["tiles"] == tiles and r["M"] == r["N"] == r["K"]}
        rows.append({**entry, "pct_of_cublas": pct})
    return rows


def speedups(results, shape):
    """{kernel: TFLOP/s} at one shape, for comparing rungs in a notebook."""
    return {r["kernel"]: r["tflops"] for r in results if (r["M"], r["N"], r["K"]) == tuple(shape)}


def outer_product_counts(k_steps, m, n):
    """Shared-to-register reads and FMAs of a thread owning an m x n micro-tile over k_steps
    (the lesson's scalar slot model): reads k(m + n), FMAs k m n."""
    return {"reads": k_steps * (m + n), "fmas": k_steps * m * n,
            "ratio": m * n / (m + n), "slots": m * n + m + n}

