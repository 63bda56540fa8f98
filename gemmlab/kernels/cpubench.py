"""``gemmlab bench --cpu``: time the five single-thread CPU GEMMs beside NumPy's BLAS matmul.

Every version is first checked against a float64 reference on the same inputs; then each is run
once to warm up (the first call also compiles it) and timed ``repeats`` times; the median is
reported, as GFLOP/s with the 2MNK convention. NumPy is timed twice: limited to one BLAS thread
(the fair comparison with the single-thread versions) and with all its threads.
"""
import json
import statistics
import sys

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

from .. import measure
from ..perfmodel import gemm_flops
from . import cpu

DEFAULT_SIZES = (256, 512, 1024)
NUMPY_1T, NUMPY_ALL = "numpy (1 thread)", "numpy (all threads)"


def versions():
    """Name -> (function, BLAS thread limit) for every version timed: the five CPU GEMMs, then
    NumPy's matmul twice (limit None: all the threads BLAS wants)."""
    table = {name: (cpu.KERNELS[name], None) for name in cpu.names()}
    table[NUMPY_1T] = (np.matmul, 1)
    table[NUMPY_ALL] = (np.matmul, None)
    return table


def _validate(name, C, A, B):
    reference = A.astype(np.float64) @ B.astype(np.float64)
    scale = np.abs(A).astype(np.float64) @ np.abs(B).astype(np.float64)
    bound = 2 * A.shape[1] * np.finfo(np.float32).eps * scale
    if not np.all(np.abs(C - reference) <= bound):
        raise RuntimeError(f"{name} gives a wrong C = AB at {A.shape} x {B.shape}; not timing it")
    return float(np.max(np.abs(C - reference) / np.maximum(np.abs(reference), 1e-30)))


def run(sizes=DEFAULT_SIZES, repeats=5, progress=print, seed=0):
    """Validate and time every version on square n x n FP32 matrices; one dict per (version, n)."""
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    table = versions()
    rng = np.random.default_rng(seed)
    results, total, done = [], len(sizes) * len(table), 0
    for n in sizes:
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"sizes must be whole numbers >= 1, got {n!r}")
        A = rng.standard_normal((n, n)).astype(np.float32)
        B = rng.standard_normal((n, n)).astype(np.float32)
        for name, (fn, blas_threads) in table.items():
            done += 1
            if progress:
                progress(f"[{done:>2}/{total}] {name:<20} n={n:<5}", end="", flush=True)
            with threadpool_limits(limits=blas_threads, user_api="blas"):
                rel_err = _validate(name, fn(A, B), A, B)
                times = measure.wall_seconds(lambda fn=fn, A=A, B=B: fn(A, B), repeats,
                                             warmup=1)
            median = statistics.median(times)
            gflops = gemm_flops(n, n, n) / median / 1e9
            results.append({"kernel": name, "n": int(n), "ms": median * 1e3,
                            "min_ms": min(times) * 1e3, "max_ms": max(times) * 1e3,
                            "gflops": gflops, "max_rel_err": rel_err, "repeats": repeats})
            if progress:
                progress(f" {median * 1e3:10.2f} ms {gflops:8.2f} GFLOP/s", flush=True)
    return results


def machine():
    """Where the numbers come from (``gl.measure.machine``), with the BLAS NumPy calls."""
    blas = [f"{i.get('internal_api')} {i.get('version')} ({i.get('num_threads')} threads)"
            for i in threadpool_info() if i.get("user_api") == "blas"]
    return measure.machine(gpu=None, blas="; ".join(blas) or "unknown")


def format_table(results):
    """Results as aligned text, one row per version, one column per size (GFLOP/s)."""
    sizes = sorted({r["n"] for r in results})
    names = list(dict.fromkeys(r["kernel"] for r in results))
    cell = {(r["kernel"], r["n"]): r["gflops"] for r in results}
    lines = [f"{'GFLOP/s':<20}" + "".join(f"{f'n={n}':>12}" for n in sizes)]
    for name in names:
        lines.append(f"{name:<20}" + "".join(
            f"{cell[name, n]:>12.2f}" if (name, n) in cell else f"{'-':>12}" for n in sizes))
    return "\n".join(lines)


def main(args):
    """Entry point of ``gemmlab bench --cpu [--sizes N ...] [--out FILE]``."""
    sizes = tuple(getattr(args, "sizes", None) or DEFAULT_SIZES)
    info = machine()
    print(f"CPU GEMM benchmark on {info['cpu']} ({info['logical_cores']} logical cores), "
          f"median of 5 after one warm-up")
    results = run(sizes)
    print()
    print(format_table(results))
    out = getattr(args, "out", None)
    if out:
        with open(out, "w", encoding="utf-8") as f:
            json.dump({"machine": info, "results": results}, f, indent=2)
            f.write("\n")
        print(f"\nwrote {out}", file=sys.stderr)
    return 0
