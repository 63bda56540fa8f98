"""The recorded runs on two GPUs, as the lessons read them (through ``gl.measure.recorded``).

A notebook cannot start two GPU ranks itself (``gemmlab allreduce --backend nccl`` and
``gemmlab tp --backend nccl`` start one process per GPU), so lessons 07, 09 and 15 read the runs
recorded by ``benchmarks/gpu_multi.sh`` on a machine with two H200s linked by NVLink, on the
simulator and on a GPU alike, and say so:

- :func:`sweep`: our ring (as a CUDA graph, step by step from Python, and reading the peer's
  memory over NVLink with the addition fused) beside NCCL's all-reduce, reduce-scatter and
  all-gather, 8 KiB to 1 GiB, every result exact;
- :func:`layers`: Megatron's FFN and attention, FP32 and FP16, local GEMMs against the all-reduce;
- :func:`breakdown`: where one step of our ring went, part by part;
- :func:`link_fit`: alpha and beta fitted to a recorded curve (the lessons' NVLink figures).

Only machines with two GPUs were lent for these runs: no figure here is for 4 or 8 GPUs.
"""
from .. import measure
from .fit import fit_records

SWEEP = "nccl_h200x2_allreduce.json"
LAYERS = "nccl_h200x2_layers.json"
BREAKDOWN = "nccl_h200x2_breakdown.json"


def _load(name):
    data = measure.recorded(name)
    if data is None:
        raise FileNotFoundError(f"benchmarks/{name} is not in this checkout; it is recorded by "
                                f"`bash benchmarks/gpu_multi.sh OUT_DIR` on a machine with 2 GPUs")
    return data


def sweep(collective=None):
    """The recorded sweep's records (each with algorithm, collective, n_ranks, size_bytes, seconds,
    algbw, busbw, verified and the machine); with ``collective`` ("allreduce", "reducescatter",
    "allgather") only those."""
    records = _load(SWEEP)
    return [r for r in records if collective in (None, r.get("collective", "allreduce"))]


def layers():
    """The recorded layer reports of ``gemmlab tp --backend nccl``, one per (layer, dtype)."""
    return _load(LAYERS)


def breakdown():
    """The recorded breakdown of one ring step (``benchmarks/ring_breakdown.py``)."""
    return _load(BREAKDOWN)


def label(record):
    """Where and when a record was measured: "2 x NVIDIA H200, NCCL 2.28.9, 2026-11-30"."""
    v = record["nccl_version"]
    return (f"{record['n_ranks']} x {record['gpu']}, NCCL {v // 10000}.{v // 100 % 100}.{v % 100}, "
            f"{record['date'][:10]}")


def link_fit(algorithm="nccl"):
    """The alpha-beta fit (``fit.AlphaBetaFit``: alpha in seconds per step, beta in seconds per
    byte) of one all-reduce of the recorded sweep, with the ring's step and byte counts."""
    records = [r for r in sweep("allreduce") if r["algorithm"] == algorithm]
    if not records:
        raise ValueError(f"no recorded all-reduce named {algorithm!r}; recorded: "
                         f"{sorted({r['algorithm'] for r in sweep('allreduce')})}")
    (fit,) = fit_records(records)
    return fit
