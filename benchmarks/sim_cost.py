"""What one gl.gemm costs on Numba's CUDA simulator, per rung: seconds per multiply-add (M*N*K)
at shapes large enough that the fixed cost of a launch is small. gemmlab/simcost.py holds the
result, which gl.gemm uses to warn before a long simulated run.

    GEMMLAB_BACKEND=sim python benchmarks/sim_cost.py     # prints the table, writes sim_cost.json
"""
import json
import os
import statistics
import time
from pathlib import Path

import numpy as np

import gemmlab as gl

SHAPES = [(24, 24, 24), (32, 32, 32), (48, 48, 48), (40, 24, 56)]


def main():
    assert gl.device.backend() == "sim", "run with GEMMLAB_BACKEND=sim"
    rng = np.random.default_rng(0)
    records, fits = [], {}
    load_before = os.getloadavg()
    for name in gl.kernels.names():
        gl.gemm(np.ones((8, 8), np.float32), np.ones((8, 8), np.float32), kernel=name)
        per_fma = []
        for M, N, K in SHAPES:
            A = rng.standard_normal((M, K)).astype(np.float32)
            B = rng.standard_normal((K, N)).astype(np.float32)
            start = time.perf_counter()
            gl.gemm(A, B, kernel=name)
            seconds = time.perf_counter() - start
            records.append({"kernel": name, "M": M, "N": N, "K": K, "seconds": seconds})
            per_fma.append(seconds / (M * N * K))
        fits[name] = {"median": statistics.median(per_fma), "min": min(per_fma),
                      "max": max(per_fma)}
        print(f"{name:9s} {fits[name]['median'] * 1e6:7.1f} us per multiply-add "
              f"({fits[name]['min'] * 1e6:.1f} .. {fits[name]['max'] * 1e6:.1f})")
    machine = gl.measure.machine(gpu=None, load_before=load_before, load_after=os.getloadavg())
    (Path(__file__).parent / "sim_cost.json").write_text(
        json.dumps({"machine": machine, "seconds_per_fma": fits, "records": records},
                   indent=1) + "\n")


if __name__ == "__main__":
    main()
