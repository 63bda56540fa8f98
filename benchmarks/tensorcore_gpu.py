"""Issue 5 on a GPU: correctness of the WMMA kernel, the accumulation probes, timings against
cuBLAS and the FP32 ladder, and a small launch for compute-sanitizer.

Run it through ``benchmarks/gpu_tensorcore.sh`` (which also runs the tests and the sanitizers):

    python benchmarks/tensorcore_gpu.py --out DIR/tensorcore_h200.json
    python benchmarks/tensorcore_gpu.py --sanitize-launch          # under compute-sanitizer
    python benchmarks/tensorcore_gpu.py --merge-sanitizer DIR      # sanitizer logs -> the JSON
"""
import argparse
import json
import os
import re
import sys
import traceback
from pathlib import Path

os.environ.setdefault("GEMMLAB_BACKEND", "gpu")

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402

import gemmlab as gl  # noqa: E402
from gemmlab import tensorcore as tc  # noqa: E402
from gemmlab.tensorcore import kernel, numerics, probes, timing  # noqa: E402

SIZES = (2048, 4096, 8192)
REPEATS = 25
WMMA_TILINGS = ("lesson", "pingpong", "fast", "fast4", "wide")
RECORD_NAME = "tensorcore_h200.json"


def log(*args):
    print(*args, flush=True)


def _cupy():
    import cupy
    return cupy


# ------------------------------------------------------------------------------------- checks

def _random_inputs(rng, M, N, K, fmt):
    dtype = np.float16 if fmt == "fp16" else ml_dtypes.bfloat16
    A = rng.standard_normal((M, K)).astype(dtype)
    B = rng.standard_normal((K, N)).astype(dtype)
    return A, B


def _reference(A, B, C=None, alpha=1.0, beta=0.0):
    A64, B64 = A.astype(np.float64), B.astype(np.float64)
    ref = alpha * (A64 @ B64) + (0.0 if C is None else beta * C.astype(np.float64))
    scale = abs(alpha) * (np.abs(A64) @ np.abs(B64)) + (0.0 if C is None else abs(beta) * np.abs(C))
    return ref, scale


def correctness(rng):
    """The kernel against float64 at odd shapes, every tiling, FP16 and BF16, with alpha/beta."""
    rows = []
    for tiling in WMMA_TILINGS:
        for fmt in ("fp16", "bf16"):
            if fmt == "bf16" and tiling not in ("lesson", "fast"):
                continue
            for (M, N, K) in ((1, 1, 1), (37, 53, 71), (200, 136, 88), (129, 257, 300)):
                A, B = _random_inputs(rng, M, N, K, fmt)
                C = rng.standard_normal((M, N)).astype(np.float32)
                got = tc.gemm_gpu(A, B, C, 1.5, -0.5, tiling=tiling)
                ref, scale = _reference(A, B, C, 1.5, -0.5)
                err = float(np.max(np.abs(got - ref) / np.maximum(scale, 1e-30)))
                bound = tc.truncation_bound(K) + 4 * 2.0 ** -24       # holds for truncating steps
                rn_bound = tc.accumulation_bound(K) + 4 * 2.0 ** -24   # one rounding per step
                rows.append({"tiling": tiling, "fmt": fmt, "shape": [M, N, K],
                             "max_err_over_scale": err, "bound": bound, "ok": err <= bound,
                             "within_round_to_nearest_bound": err <= rn_bound})
    bad = [r for r in rows if not r["ok"]]
    log(f"correctness: {len(rows) - len(bad)}/{len(rows)} cases within the bound; "
        f"{sum(r['within_round_to_nearest_bound'] for r in rows)} even within the round-to-nearest one")
    return {"cases": rows, "all_ok": not bad}


def _ulps(a, b):
    ai = a.astype(np.float32).view(np.int32).astype(np.int64)
    bi = b.astype(np.float32).view(np.int32).astype(np.int64)
    ai = np.where(ai < 0, -(ai & 0x7FFFFFFF), ai)
    bi = np.where(bi < 0, -(bi & 0x7FFFFFFF), bi)
    return np.abs(ai - bi)


def emulation_agreement(rng, models):
    """GPU kernel vs the NumPy emulation on the same inputs, for each model of the MMA step."""
    out = {}
    for fmt in ("fp16", "bf16"):
        A, B = _random_inputs(rng, 192, 200, 520, fmt)
        gpu = tc.gemm_gpu(A, B, tiling="fast")
        for model in models:
            if fmt == "bf16" and model not in ("rn",):
                continue
            emu = tc.emulate_steps(A, B, model=model)
            ulps = _ulps(gpu, emu)
            out[f"{fmt} {model}"] = {"bitwise_equal_fraction": float(np.mean(ulps == 0)),
                                     "max_ulps": int(ulps.max()), "mean_ulps": float(ulps.mean())}
            log(f"emulation [{fmt}, {model}]: {out[f'{fmt} {model}']}")
    return out


def run_probes():
    """The probes through two tilings of the kernel, and the candidate models that match."""
    A, B = probes.probe_matrices()
    result = {}
    for tiling in ("lesson", "fast"):
        D = tc.gemm_gpu(A, B, tiling=tiling)
        result[tiling] = probes.read_results(D)
    measured = result["fast"]
    same = result["lesson"] == result["fast"]
    matches, wrong = probes.matching_models(measured)
    log(f"probes: tilings agree: {same}; models matching every probe: {[str(m) for m in matches]}")
    return {"measured": measured, "lesson_equals_fast": same,
            "matching_models": [str(m) for m in matches], "wrong_probes": wrong,
            "predictions": probes.predictions(),
            "questions": {p.name: p.question for p in probes.PROBES}}, matches


def fp16_accumulator_checks():
    """Ones through the FP16-accumulator kernel: the block-16 model predicts a stall at 32768."""
    rows = {}
    for K in (4096, 65536):
        A = np.ones((16, K), dtype=np.float16)
        B = np.ones((K, 16), dtype=np.float16)
        D = tc.gemm_gpu(A, B, tiling="lesson", acc="fp16")
        rows[str(K)] = {"measured": float(D[0, 0]),
                        "model_block16_rn": tc.ones_sum(K, "fp16")}
    log(f"fp16 accumulator, ones: {rows}")
    return rows


def measured_error_vs_k(rng, k_values=(16, 64, 256, 1024, 4096, 16384), trials=32):
    """Median normalised errors of T x T dot products of length K on the GPU (positive inputs,
    where rounding errors add up), with the emulation's prediction on the same inputs."""
    series = {"K": list(k_values)}
    for fmt, acc in (("fp16", "fp32"), ("fp16", "fp16"), ("bf16", "fp32")):
        key = f"{fmt}_{acc}acc"
        measured, modelled = [], []
        for K in k_values:
            dtype = np.float16 if fmt == "fp16" else ml_dtypes.bfloat16
            A = rng.uniform(0, 1, (trials, K)).astype(dtype)
            B = rng.uniform(0, 1, (K, trials)).astype(dtype)
            ref, scale = _reference(A, B)
            gpu = tc.gemm_gpu(A, B, tiling="lesson", acc=acc)
            emu = tc.emulate_steps(A, B, acc=acc)
            measured.append(float(np.median(np.abs(gpu - ref) / scale)))
            modelled.append(float(np.median(np.abs(emu - ref) / scale)))
        series[key] = measured
        series[key + "_model"] = modelled
    log(f"error vs K (positive inputs): {series}")
    return series


# ---------------------------------------------------------------------------------- timings

def _wmma_rows(n, A16, B16, Abf, Bbf):
    rows = []
    for tiling in WMMA_TILINGS + ("bf16:fast",):
        fmt, name = ("bf16", "fast") if tiling == "bf16:fast" else ("fp16", tiling)
        A, B = (Abf, Bbf) if fmt == "bf16" else (A16, B16)
        problem = kernel.prepare(A, B, tiling=name, bits_as=fmt)
        times = gl.measure.flushed_ms(problem.launch, REPEATS, events="cupy")
        row = {"n": n, "kernel": f"wmma_{fmt}_{name}", **timing.summary(times, n, n, n),
               **kernel.kernel_attributes(name, fmt)}
        row["spot_check_max_err_over_scale"] = _spot_check(problem, A, B)
        rows.append(row)
        log(f"n={n} {row['kernel']:22s} {row['tflops']:8.1f} TFLOP/s  regs={row['regs']} "
            f"spills={row['local_bytes']} spot err={row['spot_check_max_err_over_scale']:.2e}")
    return rows


def _spot_check(problem, A, B, rows=32):
    """Max normalised error of the first rows of the benchmarked result against float64."""
    cupy = _cupy()
    a = A[:rows].astype(cupy.float32).astype(cupy.float64) if A.dtype != cupy.uint16 else None
    if a is None:   # BF16 bit patterns: widen to float32 by shifting into the high half
        a = (A[:rows].astype(cupy.uint32) << 16).view(cupy.float32).astype(cupy.float64)
        b = (B.astype(cupy.uint32) << 16).view(cupy.float32).astype(cupy.float64)
    else:
        b = B.astype(cupy.float32).astype(cupy.float64)
    ref = a @ b
    scale = cupy.abs(a) @ cupy.abs(b)
    got = problem.C_out[:rows].astype(cupy.float64)
    return float(cupy.max(cupy.abs(got - ref) / scale))


def _cublas_rows(n, A16, B16, Abf, Bbf):
    rows = []
    for name in timing.BASELINES:
        src = (Abf, Bbf) if name == "cublas_bf16" else (A16, B16)
        A, B, C = timing.baseline_operands(name, *src)
        times = gl.measure.flushed_ms(timing.cublas_launcher(name, A, B, C), REPEATS,
                                      events="cupy")
        rows.append({"n": n, "kernel": name, **timing.summary(times, n, n, n)})
        log(f"n={n} {name:22s} {rows[-1]['tflops']:8.1f} TFLOP/s")
    return rows


def _ladder_rows(n, A16, B16):
    """The numba FP32 ladder's rungs (someone else's code: failures are recorded, not fatal)."""
    cupy = _cupy()
    rows = []
    try:
        names = gl.kernels.names()
    except Exception as exc:  # noqa: BLE001
        return [{"n": n, "kernel": "fp32 ladder", "error": repr(exc)}]
    cuda = gl.device.cuda()
    A32, B32 = A16.astype(cupy.float32), B16.astype(cupy.float32)
    out = cupy.empty((n, n), dtype=cupy.float32)
    dA, dB, dOut = cuda.as_cuda_array(A32), cuda.as_cuda_array(B32), cuda.as_cuda_array(out)
    for name in names:
        try:
            rung = gl.kernels.get(name)
            tiles = rung.resolve({})
            plan = rung.plan(**tiles)
            kern = rung.kernel(**tiles)
            one, zero = np.float32(1), np.float32(0)

            def launch(kern=kern, plan=plan, one=one, zero=zero):
                kern[plan.grid(n, n), plan.block](dA, dB, dOut, dOut, one, zero)
            times = gl.measure.flushed_ms(launch, 20, 2, events="cupy")
            row = {"n": n, "kernel": f"ladder_{name}", "tiles": tiles,
                   **timing.summary(times, n, n, n)}
        except Exception as exc:  # noqa: BLE001
            row = {"n": n, "kernel": f"ladder_{name}", "error": f"{type(exc).__name__}: {exc}"}
        rows.append(row)
        log(f"n={n} ladder_{name:15s} {row.get('tflops', float('nan')):8.1f} TFLOP/s {row.get('error', '')}")
    return rows


def performance():
    cupy = _cupy()
    rows = []
    for n in SIZES:
        rng = cupy.random.default_rng(n)
        A16 = rng.standard_normal((n, n), dtype=cupy.float32).astype(cupy.float16)
        B16 = rng.standard_normal((n, n), dtype=cupy.float32).astype(cupy.float16)
        Abf = _bf16_bits(cupy, A16)
        Bbf = _bf16_bits(cupy, B16)
        rows += _cublas_rows(n, A16, B16, Abf, Bbf)
        rows += _wmma_rows(n, A16, B16, Abf, Bbf)
        if n == 4096:
            rows += _ladder_rows(n, A16, B16)
        ref = {r["kernel"]: r["tflops"] for r in rows if r["n"] == n and "tflops" in r}
        for r in rows:
            if r["n"] == n and "tflops" in r and "cublas_fp16" in ref:
                r["pct_of_cublas_fp16"] = 100 * r["tflops"] / ref["cublas_fp16"]
        del A16, B16, Abf, Bbf
        cupy.get_default_memory_pool().free_all_blocks()
    return rows


def _bf16_bits(cupy, x16):
    """FP16 device values -> BF16 bit patterns (uint16), rounded to nearest even."""
    bits = x16.astype(cupy.float32).view(cupy.uint32)
    rounded = bits + 0x7FFF + ((bits >> 16) & 1)
    return (rounded >> 16).astype(cupy.uint16)


def headline(rows):
    """The numbers the issue asks for, at n = 4096 (or the largest size timed)."""
    n = 4096 if any(r["n"] == 4096 for r in rows) else max(r["n"] for r in rows)
    at = {r["kernel"]: r for r in rows if r["n"] == n and "tflops" in r}
    wmma = max((r for k, r in at.items() if k.startswith("wmma_fp16")), key=lambda r: r["tflops"])
    ladder = [r for k, r in at.items() if k.startswith("ladder_")]
    best_ladder = max(ladder, key=lambda r: r["tflops"]) if ladder else None
    chip = gl.perfmodel.hardware.chip("H200 SXM")
    predicted = chip.peak("fp16") / chip.peak("fp32")
    out = {"n": n, "best_wmma": wmma["kernel"], "wmma_tflops": wmma["tflops"],
           "cublas_fp16_tflops": at["cublas_fp16"]["tflops"],
           "pct_of_cublas_fp16": wmma["pct_of_cublas_fp16"],
           "target_pct": 30, "goal_pct": 50,
           "predicted_factor_over_fp32": predicted}
    if best_ladder:
        out.update({"best_ladder": best_ladder["kernel"], "ladder_tflops": best_ladder["tflops"],
                    "measured_factor_over_ladder": wmma["tflops"] / best_ladder["tflops"]})
    log(f"headline: {json.dumps(out, indent=1)}")
    return out


# ------------------------------------------------------------------------------ entry points

def main_bench(out_path):
    rng = np.random.default_rng(2024)
    record = {"issue": 5, "machine": gl.measure.machine(gpu="cupy",
                                                        timing=gl.measure.FLUSHED_METHOD)}
    log(f"machine: {record['machine']}")
    record["correctness"] = _guard(lambda: correctness(rng))
    probe_result = _guard(run_probes)
    matches = []
    if isinstance(probe_result, tuple):
        probe_result, matches = probe_result
    record["probes"] = probe_result
    models = ["rn"] + [m for m in matches if isinstance(m, numerics.AlignTruncate)][:4]
    record["emulation_agreement"] = _guard(lambda: emulation_agreement(rng, models))
    record["fp16_accumulator_ones"] = _guard(fp16_accumulator_checks)
    record["error_vs_k"] = _guard(lambda: measured_error_vs_k(rng))
    perf = _guard(performance)
    record["performance"] = perf if isinstance(perf, list) else []
    if not isinstance(perf, list):
        record["performance_error"] = perf
    record["headline"] = _guard(lambda: headline(record["performance"]))
    record["compile"] = tc.compile_report()
    Path(out_path).parent.mkdir(parents=True, exist_ok=True)
    Path(out_path).write_text(json.dumps(record, indent=1, default=str))
    log(f"wrote {out_path}")


def _guard(fn):
    """Run one section; an exception is recorded (and printed) instead of ending the run."""
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - a failing section must not lose the others
        traceback.print_exc()
        return {"error": f"{type(exc).__name__}: {exc}"}


def sanitize_launch():
    """Small launches with edges, alpha/beta and every kernel variant (for compute-sanitizer)."""
    import cupy
    rng = np.random.default_rng(7)
    for tiling, fmt, acc, (M, N, K) in (("lesson", "fp16", "fp32", (45, 37, 52)),
                                        ("lesson", "fp16", "fp16", (33, 20, 40)),
                                        ("fast", "fp16", "fp32", (200, 136, 88)),
                                        ("fast4", "fp16", "fp32", (130, 140, 104)),
                                        ("wide", "fp16", "fp32", (129, 264, 72)),
                                        ("fast", "bf16", "fp32", (130, 72, 40))):
        A, B = _random_inputs(rng, M, N, K, fmt)
        C = rng.standard_normal((M, N)).astype(np.float32)
        got = tc.gemm_gpu(A, B, C, 1.0, 0.5, tiling=tiling, acc=acc)
        ref, scale = _reference(A, B, C, 1.0, 0.5)
        err = float(np.max(np.abs(got - ref) / scale))
        print(f"{tiling}/{fmt}/{acc} {M}x{N}x{K}: max err/scale {err:.2e}")
    cupy.cuda.Device().synchronize()


def merge_sanitizer(directory):
    directory = Path(directory)
    record_file = directory / RECORD_NAME
    record = json.loads(record_file.read_text()) if record_file.exists() else {}
    result = {}
    for tool in ("memcheck", "racecheck"):
        log_file = directory / f"sanitizer_{tool}.txt"
        if not log_file.exists():
            result[tool] = "not run"
            continue
        text = log_file.read_text(errors="replace")
        summary = re.findall(r"(?:ERROR|RACECHECK) SUMMARY:.*", text)
        clean_mark = r"SUMMARY: 0 hazards" if tool == "racecheck" else r"SUMMARY: 0 errors"
        result[tool] = {"summary": summary[-3:] if summary else ["no summary line (see log)"],
                        "clean": bool(summary) and all(re.search(clean_mark, s) for s in summary)}
    record["sanitizer"] = result
    record_file.write_text(json.dumps(record, indent=1, default=str))
    log(f"sanitizer: {result}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=os.path.join(os.environ.get("OUT", "benchmarks"), RECORD_NAME))
    p.add_argument("--sanitize-launch", action="store_true")
    p.add_argument("--merge-sanitizer", metavar="DIR")
    args = p.parse_args(argv)
    ok, reason = tc.available()
    if not ok:
        print(f"cannot run: {reason}", file=sys.stderr)
        return 2
    if args.sanitize_launch:
        sanitize_launch()
    elif args.merge_sanitizer:
        merge_sanitizer(args.merge_sanitizer)
    else:
        main_bench(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
