"""What one gl.gemm costs on Numba's CUDA simulator, per rung: seconds per multiply-add (M*N*K)
at shapes large enough that the fixed cost of a launch is small. gemmlab/simcost.py holds the
result, which gl.gemm uses to warn before a long simulated run.

Each run is timed twice: wall-clock time, and the CPU time of the process (all its threads). The
simulator's threads take turns on Python's GIL, so the wall time comes near the CPU time on a
machine with a core to spare; on a busy shared machine the wall time grows with the load (2.5-4x
at a load average of 10 on 2 cores) while the CPU time moves much less, so the CPU time is the
figure simcost uses.

    GEMMLAB_BACKEND=sim python benchmarks/sim_cost.py                   # every rung
    GEMMLAB_BACKEND=sim python benchmarks/sim_cost.py pingpong outer    # only the rungs named

It prints the table and writes benchmarks/sim_cost.json. Naming rungs re-measures only those and
keeps the other rungs' figures from the runs that measured them: "machine" is the latest run's
(with the load average before and after), "earlier_runs" the runs before it, and every figure
carries the date of the run it came from.
"""
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import gemmlab as gl

SHAPES = [(24, 24, 24), (32, 32, 32), (48, 48, 48), (40, 24, 56)]
RESULT = Path(__file__).parent / "sim_cost.json"


def measure(name, rng):
    """(per-shape records, {median, min, max} CPU seconds per multiply-add, and the median
    wall-clock seconds) for one rung."""
    gl.gemm(np.ones((8, 8), np.float32), np.ones((8, 8), np.float32), kernel=name)   # compile
    records, per_fma = [], []
    for M, N, K in SHAPES:
        A = rng.standard_normal((M, K)).astype(np.float32)
        B = rng.standard_normal((K, N)).astype(np.float32)
        start, start_cpu = time.perf_counter(), time.process_time()
        gl.gemm(A, B, kernel=name)
        seconds, cpu = time.perf_counter() - start, time.process_time() - start_cpu
        records.append({"kernel": name, "M": M, "N": N, "K": K, "seconds": seconds,
                        "cpu_seconds": cpu})
        per_fma.append((cpu / (M * N * K), seconds / (M * N * K)))
    cpu_per_fma = [c for c, _ in per_fma]
    return records, {"median": statistics.median(cpu_per_fma), "min": min(cpu_per_fma),
                     "max": max(cpu_per_fma),
                     "wall_median": statistics.median(w for _, w in per_fma)}


def previous():
    """The recorded result, in this script's format; empty when none was recorded."""
    if not RESULT.exists():
        return {"earlier_runs": [], "seconds_per_fma": {}, "records": []}
    return json.loads(RESULT.read_text())


def main(names):
    assert gl.device.backend() == "sim", "run with GEMMLAB_BACKEND=sim"
    unknown = sorted(set(names) - set(gl.kernels.names()))
    assert not unknown, f"not rungs: {unknown}; the rungs are {gl.kernels.names()}"
    names = names or gl.kernels.names()
    result = previous()
    rng = np.random.default_rng(0)
    load_before = os.getloadavg()
    records, fits = [], {}
    for name in names:
        measured, fits[name] = measure(name, rng)
        records += measured
        fit = fits[name]
        print(f"{name:9s} {fit['median'] * 1e6:7.1f} us CPU per multiply-add "
              f"({fit['min'] * 1e6:.1f} .. {fit['max'] * 1e6:.1f}), wall "
              f"{fit['wall_median'] * 1e6:.1f} us")
    machine = gl.measure.machine(gpu=None, load_before=load_before, load_after=os.getloadavg(),
                                 kernels=list(names), clock="cpu")
    if "machine" in result:                     # the run before this one
        result["earlier_runs"].append(result["machine"])
    result["machine"] = machine
    date = {"date": machine["date"]}            # which run each figure comes from
    result["records"] = ([r for r in result["records"] if r["kernel"] not in names]
                         + [{**r, **date} for r in records])
    measured = {**result["seconds_per_fma"], **{name: {**fit, **date} for name, fit in fits.items()}}
    result["seconds_per_fma"] = {name: measured[name] for name in gl.kernels.names()
                                 if name in measured}
    RESULT.write_text(json.dumps(result, indent=1) + "\n")
    print(f"load average {load_before[0]:.1f} before, {machine['load_after'][0]:.1f} after")


if __name__ == "__main__":
    main(sys.argv[1:])
