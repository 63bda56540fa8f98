"""Figures of the runs on several GPUs (lessons 07, 09, 15 and benchmarks/RESULTS.md): the busbw
curves of the all-reduce sweep, and each layer's GEMM time against its all-reduce time."""
import numpy as np

from ..collectives.allreduce_command import format_size
from .allreduce import axes_or_new

# one style per algorithm of the NCCL sweep, so that the lessons and the PNG agree
STYLES = {"ring": ("o-", "our ring (CUDA graph)"),
          "ring_stepwise": ("s--", "our ring, step by step from Python"),
          "ring_nvlink": ("*-", "our ring, NVLink loads (addition fused)"),
          "nccl": ("^-", "NCCL all-reduce"),
          "nccl_reduce_scatter": ("v:", "NCCL reduce-scatter"),
          "nccl_allgather": ("d:", "NCCL all-gather")}


def plot_busbw(records, ax=None, title=None):
    """busbw (GB/s) against the size per rank, one line per algorithm of the records (NCCL's
    reduce-scatter and all-gather with their own (N-1)/N factor)."""
    ax = axes_or_new(ax, (7.5, 4.5))
    for name in dict.fromkeys(r["algorithm"] for r in records):
        mine = sorted((r["size_bytes"], r["busbw"]) for r in records if r["algorithm"] == name)
        style, label = STYLES.get(name, (".-", name))
        ax.plot(*zip(*mine, strict=True), style, label=label, markersize=5)
    sizes = sorted({r["size_bytes"] for r in records})
    ticks = sizes[::3]
    ax.set_xscale("log", base=2)
    ax.set_xticks(ticks, [format_size(s) for s in ticks])
    ax.set_xlabel("bytes per rank (S)")
    ax.set_ylabel("busbw (GB/s)")
    ax.set_title(title or "busbw against size")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return ax


def plot_layer_times(reports, algorithms=("nccl", "ring_nvlink", "ring_stepwise"), ax=None):
    """One horizontal bar per (layer, dtype, all-reduce): the local GEMMs' time, then the
    all-reduce's, labelled with the all-reduce's share of the layer."""
    ax = axes_or_new(ax, (8, 0.5 + 0.45 * len(reports) * len(algorithms)))
    rows = [(r, a) for r in reports for a in algorithms if a in r["allreduce_seconds"]]
    y = np.arange(len(rows))[::-1]
    gemm = [r["gemm_seconds"] * 1e3 for r, _ in rows]
    comm = [r["allreduce_seconds"][a] * 1e3 for r, a in rows]
    ax.barh(y, gemm, color="tab:blue", label="local GEMMs (one GPU's shard)")
    ax.barh(y, comm, left=gemm, color="tab:orange", label="exit all-reduce")
    for yi, g, c, (r, a) in zip(y, gemm, comm, rows, strict=True):
        ax.text(g + c, yi, f"  {r['comm_share'][a]:.0%}", va="center", fontsize=8)
    ax.set_yticks(y, [f"{r['layer']} {r['dtype']}, {STYLES.get(a, ('', a))[1]}"
                      for r, a in rows], fontsize=8)
    ax.set_xlim(0, 1.15 * max(g + c for g, c in zip(gemm, comm, strict=True)))
    ax.set_xlabel("time per GPU (ms)")
    ax.set_title(f"Megatron layers on {rows[0][0]['n_ranks']} GPUs: GEMMs vs all-reduce")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return ax
