"""The student's own ladder: the TFLOP/s their lab kernels reached on a GPU, kept across notebooks.

Each passing lab check on a GPU backend records its figures (the student's kernel, the course's
kernel and cuBLAS, measured in the same call) in a small JSON file, by default
``~/.cache/gemmlab/my_ladder.json`` (``GEMMLAB_LADDER`` names another). :func:`plot` draws them
beside one another; lesson 11 shows it. Nothing else is ever written there.
"""
import json
import os
from pathlib import Path

ORDER = ("naive", "tiled", "pingpong", "outer", "twolevel")
FIELDS = ("tflops", "n", "gpu", "course", "course_tiles", "course_tflops", "cublas_tflops")


def path():
    return Path(os.environ.get("GEMMLAB_LADDER") or Path.home() / ".cache/gemmlab/my_ladder.json")


def load():
    """{lab: figures} of the labs measured so far ({} when none or the file is unreadable; an
    entry without every field is left out)."""
    try:
        with open(path(), encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {lab: row for lab, row in data.items()
            if isinstance(row, dict) and all(key in row for key in FIELDS)}


def record(lab, row):
    data = load()
    data[lab] = row
    target = path()
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
    tmp.replace(target)


def describe(lab, row):
    """'your tiled kernel: 7.4 TFLOP/s at 4096^3, 96% of the course's `tiled` (T=16), 15% of
    cuBLAS (NVIDIA H200)'."""
    tiles = ",".join(f"{k}={v}" for k, v in row["course_tiles"].items())
    cublas = (f", {100 * row['tflops'] / row['cublas_tflops']:.0f}% of cuBLAS"
              if row.get("cublas_tflops") else ", cuBLAS not measured (no CuPy)")
    return (f"your {lab} kernel: {row['tflops']:.1f} TFLOP/s at {row['n']}^3, "
            f"{100 * row['tflops'] / row['course_tflops']:.0f}% of the course's "
            f"`{row['course']}` ({tiles}){cublas} ({row['gpu']}).")


def plot(records=None, ax=None):
    """Bars of the student's kernels beside the course's, with cuBLAS as a line; the axes.
    With no record yet the axes say how to get one."""
    import matplotlib.pyplot as plt
    records = load() if records is None else records
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3.4))
    labs = [lab for lab in ORDER if lab in records]
    if not labs:
        ax.text(0.5, 0.5, "No lab measured on a GPU yet: run the lab checks of lessons\n"
                "05, 08, 10 and 11 on a GPU and your kernels appear here.",
                ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return ax
    x = range(len(labs))
    ax.bar([i - 0.2 for i in x], [records[lab]["tflops"] for lab in labs], 0.4, label="yours")
    ax.bar([i + 0.2 for i in x], [records[lab]["course_tflops"] for lab in labs], 0.4,
           label="the course's")
    cublas = [records[lab]["cublas_tflops"] for lab in labs if records[lab].get("cublas_tflops")]
    if cublas:
        ax.axhline(max(cublas), color="grey", linestyle=":", label="cuBLAS")
    ax.set_xticks(list(x), labs)
    ax.set_ylabel("TFLOP/s")
    ax.set_title(f"Your ladder at {records[labs[0]]['n']}^3 on {records[labs[0]]['gpu']}")
    ax.legend(fontsize=8)
    return ax
