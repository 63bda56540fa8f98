"""Lesson 16's Tensor Core kernel as measured on a GPU, for showing on machines without one.

``benchmarks/gpu_attention.sh`` runs the lesson's tiled kernel in CUDA C++ on two rungs,
:mod:`gemmlab.tensorcore.flash` (mma.sync, 4 or 8 warps) and, on Hopper,
:mod:`gemmlab.tensorcore.flash_hopper` (wgmma, TMA, warp specialisation), against a float64
reference and times them beside each backend of torch's ``scaled_dot_product_attention``; it
writes ``benchmarks/attention_h100.json``. Load it with
``gl.measure.recorded(RECORD_NAME, SECTIONS)``; these functions read what it holds.
"""
RECORD_NAME = "attention_h100.json"
SECTIONS = ("machine", "correctness", "results")
RUNGS = {"mma.sync": ("ours_w4", "ours_w8"), "wgmma": ("ours_wgmma",),    # the record's entries
         "wgmma ping-pong": ("ours_wgmma_pingpong",)}


def label(record):
    """One line naming where and when the record was measured, and with what."""
    m = record["machine"]
    return (f"recorded on {m['gpu']} (driver {m['driver']}, CUDA runtime {m['cuda_runtime']}, "
            f"torch {m['torch']}, cuDNN {m['cudnn']}) on {m['date'][:10]}, timer: {m['timer']}")


def tflops(row, name):
    """TFLOP/s of one timed entry of a result row ("ours_w8", "sdpa_cudnn"), None if it failed."""
    entry = row.get(name)
    return entry["tflops"] if isinstance(entry, dict) and "tflops" in entry else None


def summary(row):
    """One result row as the lesson's table shows it: each rung's best configuration, every SDPA
    backend that ran, and our best share of the fastest backend and of the FlashAttention-2
    backend."""
    rungs = {}
    for rung, names in RUNGS.items():
        timed = {name[5:]: tflops(row, name) for name in names if tflops(row, name) is not None}
        if timed:
            best = max(timed, key=timed.get)
            rungs[rung] = {"tflops": timed[best], "config": best}
    ours = max(r["tflops"] for r in rungs.values())
    sdpa = {name[5:]: tflops(row, name) for name in row if name.startswith("sdpa_")}
    sdpa = {name: value for name, value in sdpa.items() if value is not None}
    fastest = max(sdpa, key=sdpa.get)
    return {"shape": (row["B"], row["H"], row["N"], row["d"]), "fmt": row["fmt"],
            "causal": row["causal"], "ours": ours, "rungs": rungs, "sdpa": sdpa,
            "fastest": fastest, "of_fastest": ours / sdpa[fastest],
            "of_flash2": ours / sdpa["flash"] if "flash" in sdpa else None}


def rows(record, N=None, d=None):
    """:func:`summary` of every timed shape (optionally only sequence length N, head width d)."""
    return [summary(r) for r in record["results"]
            if (N is None or r["N"] == N) and (d is None or r["d"] == d)]
