"""gl.gemm as a user calls it, CuPy arrays in and out (issue 58, item 3): its host time a call,
and its FP32 speed against the fastest SGEMM library in the same run.

    python benchmarks/gemm_host.py --out DIR/gemm_host_h100.json

Host time: 300 calls of a 256^3 GEMM after 20 warm-up calls, on the host clock, with one
synchronisation after the last (the kernel is shorter than the host's work, so the loop measures
the host). Beside gl.gemm: the two parts of the launch it made before the driver launch (numba's
configured launch, and numba's allocation of the output) and cupy.matmul, each timed the same way.

Speed: at 2048^3, 4096^3 and 8192^3, ``gl.gemm(A, B, kernel="unrolled")`` on CuPy operands (the
output allocated in the call, as a user gets it) and the libraries of library_gpu.py (TF32 off) on
the same operands, timed by ``gl.measure.flushed_ms`` (an L2 flush before each launch, Triton
do_bench's method) in alternating rounds, the median of all samples of each.
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

os.environ.setdefault("GEMMLAB_BACKEND", "gpu")
os.environ["CUPY_TF32"] = "0"                      # read when CuPy is imported: SGEMM in FP32
import gemmlab as gl                                                   # noqa: E402
from gemmlab import measure                                            # noqa: E402
from gemmlab.kernels import launch as gemm_launch                      # noqa: E402
from gemmlab.tensorcore import libraries                               # noqa: E402

ROUNDS, PER_ROUND = 4, 15
SIZES = (2048, 4096, 8192)
HOST_N, HOST_CALLS = 256, 300


def host_us(call, calls=HOST_CALLS):
    """Host microseconds a call: ``calls`` calls after 20 warm-up ones, synchronised at the end."""
    import cupy
    for _ in range(20):
        call()
    cupy.cuda.Device().synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        call()
    elapsed = time.perf_counter() - start
    cupy.cuda.Device().synchronize()
    return elapsed / calls * 1e6


def host_costs():
    import cupy
    cuda = gl.device.cuda()
    n = HOST_N
    A = cupy.random.default_rng(1).standard_normal((n, n), dtype=cupy.float32)
    dA = cuda.as_cuda_array(A)
    tiles = tuple(sorted(gl.kernels.get("unrolled").resolve({}).items()))
    configured = gemm_launch.launch_configuration("unrolled", tiles, n, n, "gpu")
    dC = cuda.device_array((n, n), dtype=np.float32)
    one, zero = np.float32(1), np.float32(0)
    return {"gl.gemm, CuPy in and out": host_us(lambda: gl.gemm(A, A, kernel="unrolled")),
            "gl.gemm, numba device arrays in and out": host_us(
                lambda: gl.gemm(dA, dA, kernel="unrolled")),
            "before: numba's configured launch alone": host_us(
                lambda: configured(dA, dA, dC, dC, one, zero)),
            "before: numba's output allocation alone": host_us(
                lambda: cuda.device_array((n, n), dtype=np.float32)),
            "cupy.matmul (cuBLAS), for comparison": host_us(lambda: A @ A)}


def fp32_size(n):
    """gl.gemm (CuPy in and out) against every library, in alternating rounds, on one operand pair."""
    import cupy
    rng = cupy.random.default_rng(11)
    A = rng.standard_normal((n, n), dtype=cupy.float32)
    B = rng.standard_normal((n, n), dtype=cupy.float32)
    out = cupy.empty((n, n), dtype=cupy.float32)
    found, missing = libraries.launchers(A, B, out)
    launches = {"gl.gemm unrolled": lambda: gl.gemm(A, B, kernel="unrolled"), **found}
    samples = {name: [] for name in launches}
    for _ in range(ROUNDS):
        for name, launch in launches.items():
            samples[name] += measure.flushed_ms(launch, PER_ROUND)
    ms = {name: statistics.median(s) for name, s in samples.items()}
    lib_ms = {name: t for name, t in ms.items() if name != "gl.gemm unrolled"}
    best_name, best_ms = libraries.best(lib_ms)
    got = gl.gemm(A[:256], B, kernel="unrolled").astype(cupy.float64)
    ref = A[:256].astype(cupy.float64) @ B.astype(cupy.float64)
    err = float(cupy.linalg.norm(got - ref) / cupy.linalg.norm(ref))
    tflops = {name: 2.0 * n ** 3 / t / 1e9 for name, t in ms.items()}
    row = {"n": n, "ms": ms, "tflops": tflops, "baseline": best_name, "libraries_missing": missing,
           "pct_of_best": 100 * best_ms / ms["gl.gemm unrolled"], "rel_err_first_256_rows": err}
    print(f"fp32 {n}^3: best {best_name} {tflops[best_name]:.1f} TFLOP/s, gl.gemm "
          f"{tflops['gl.gemm unrolled']:.1f} ({row['pct_of_best']:.1f}%), rel err {err:.1e}",
          flush=True)
    return row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    if gl.device.backend() != "gpu":
        sys.exit("gemm_host.py needs a GPU (GEMMLAB_BACKEND=gpu)")
    record = {"machine": measure.machine(), "timer": "host clock (host costs); "
              "gl.measure.flushed_ms in alternating rounds (speed)",
              "host_us_per_call_256": host_costs()}
    print("host us per call (256^3):", json.dumps(record["host_us_per_call_256"], indent=1),
          flush=True)
    record["fp32"] = [fp32_size(n) for n in SIZES]
    with open(args.out, "w") as f:
        json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()
