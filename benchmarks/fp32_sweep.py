"""`unrolled`'s tile constants swept against the best FP32 SGEMM, in one run (issue 39, item 4).

    GEMMLAB_BACKEND=gpu python benchmarks/fp32_sweep.py --out DIR/fp32_sweep_h200.json

Each variant is timed and checked as ``library_gpu.py``'s fp32 part times the default one
(``time_unrolled``: flushed median, the first 256 rows against float64) at 2048^3, 4096^3 and
8192^3, beside the libraries of ``gl.tensorcore.libraries`` (TF32 off) on the same inputs. The
record names the default (``unrolled.TILES["gpu"]``), so a change of default can be read off the
figures that chose it.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from library_gpu import FP32_GOALS, fp32_libraries, rate, time_unrolled  # noqa: E402 (backend)

from gemmlab import cudacompile, measure                 # noqa: E402
from gemmlab.kernels import unrolled                     # noqa: E402
from gemmlab.tensorcore import libraries                 # noqa: E402

BASE = unrolled.TILES["gpu"]
VARIANTS = [BASE, {**BASE, "MINB": 1}, {**BASE, "BK": 16}, {**BASE, "BK": 16, "MINB": 1},
            {**BASE, "BM": 64, "MINB": 3}, {**BASE, "BN": 64, "MINB": 3},
            {**BASE, "BM": 64, "MINB": 4}]


def variant_row(tiles, A, B, best_ms):
    """One variant's figures, or why it did not run (a plan it refuses, a compile that fails)."""
    n = A.shape[0]
    try:
        t, err = time_unrolled(tiles, A, B)
    except Exception as exc:   # noqa: BLE001 - recorded, and the sweep goes on
        return {"tiles": tiles, "skipped": f"{type(exc).__name__}: {str(exc)[:300]}"}
    return {"tiles": tiles, **rate((n, n, n), t), "pct_of_best": 100 * best_ms / t,
            "rel_err_first_256_rows": err}


def size(n):
    A, B, lib_rows, (best_name, best_ms), missing = fp32_libraries(n)
    rows = []
    for tiles in VARIANTS:
        row = variant_row(tiles, A, B, best_ms)
        rows.append(row)
        print(f"{n}^3 {tiles}: " + (f"{row['tflops']:.1f} TFLOP/s, {row['pct_of_best']:.1f}% of "
                                    f"{best_name}, err {row['rel_err_first_256_rows']:.1e}"
                                    if "tflops" in row else row["skipped"]), flush=True)
    return {"n": n, "baseline": best_name, "baseline_ms": best_ms, "libraries": lib_rows,
            "libraries_missing": missing, "goal_pct": FP32_GOALS[n], "variants": rows}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    import cupy
    record = {"machine": measure.machine(gpu="numba", libraries=libraries.versions(),
                                         compiler=cudacompile.available()[1]),
              "timer": measure.FLUSHED_METHOD, "default_tiles": BASE, "sizes": []}
    for n in (2048, 4096, 8192):
        record["sizes"].append(size(n))
        cupy.get_default_memory_pool().free_all_blocks()
        with open(args.out, "w") as f:
            json.dump(record, f, indent=1, default=str)


if __name__ == "__main__":
    main()
