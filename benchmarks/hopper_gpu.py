"""The Hopper ladder on a GPU in one call: compile, check every stage, time it beside cuBLAS.

    python benchmarks/hopper_gpu.py --out hopper_h200.json [--sizes 4096 8192] [--repeats 30]
    python benchmarks/hopper_gpu.py --sanitize-launch     # small odd launches for compute-sanitizer
    python benchmarks/hopper_gpu.py --profile-launch NAME # one 4096^3 launch of NAME for ncu

Each stage is checked in a child process (a kernel that deadlocks on an mbarrier must not take
the whole run with it) at odd shapes, on the fast path (K, N multiples of 8) and the padded path,
with alpha/beta, against float64 products of the same 16-bit inputs. Timings: the same random
normal FP16 (and BF16) inputs for every kernel, CUDA events around each launch, warm-up first,
median of ``--repeats``; cuBLAS FP16 -> FP32 (CUBLAS_COMPUTE_32F) and the WMMA kernel of part 1
measured in the same process.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np

os.environ.setdefault("GEMMLAB_BACKEND", "gpu")
import gemmlab as gl                                     # noqa: E402
from gemmlab.tensorcore import hopper, timing            # noqa: E402

CHECK_SHAPES = [(200, 264, 136), (131, 250, 77), (384, 512, 4096), (1031, 997, 1043),
                (4096, 4096, 4096)]
ODD_SHAPE = (300, 264, 200)


def _inputs(M, N, K, fmt, seed):
    import ml_dtypes
    rng = np.random.default_rng(seed)
    dt = np.float16 if fmt == "fp16" else ml_dtypes.bfloat16
    return (rng.standard_normal((M, K)).astype(dt), rng.standard_normal((K, N)).astype(dt),
            rng.standard_normal((M, N)).astype(np.float32))


def check_stage(stage, fmt):
    """Relative errors of one stage at the check shapes (plain and with alpha, beta)."""
    rows = []
    for i, (M, N, K) in enumerate(CHECK_SHAPES):
        A, B, C = _inputs(M, N, K, fmt, seed=100 + i)
        row = {"shape": [M, N, K], "padded": hopper.plan(stage, M, N, K).padded}
        try:
            ref = A.astype(np.float64) @ B.astype(np.float64)
            out = hopper.gemm(A, B, stage=stage)
            out2 = hopper.gemm(A, B, C, alpha=0.5, beta=-2.0, stage=stage)
        except Exception as exc:   # noqa: BLE001 - record it; a CUDA error ends this child anyway
            row.update(ok=False, error=f"{type(exc).__name__}: {str(exc)[:300]}")
            rows.append(row)
            break
        ref2 = 0.5 * ref - 2.0 * C.astype(np.float64)
        err = float(np.linalg.norm(out - ref) / np.linalg.norm(ref))
        err2 = float(np.linalg.norm(out2 - ref2) / np.linalg.norm(ref2))
        row.update(rel_err=err, rel_err_alpha_beta=err2,
                   nan=int(np.isnan(out).sum() + np.isnan(out2).sum()),
                   ok=bool(err < 1e-4 and err2 < 1e-4 and not np.isnan(out).any()))
        rows.append(row)
    return rows


def _median_ms(launch, repeats, warmup=5):
    return statistics.median(gl.measure.cuda_event_ms(launch, repeats, warmup, events="cupy"))


def time_size(n, fmt, stages, repeats):
    """TFLOP/s of cuBLAS, WMMA (fp16 only) and each stage at n^3 on the same inputs."""
    import cupy
    A, B, _ = _inputs(n, n, n, fmt, seed=7)
    flops = 2.0 * n ** 3
    rows = []
    dA = cupy.asarray(A.view(np.uint16)) if fmt == "bf16" else cupy.asarray(A)
    dB = cupy.asarray(B.view(np.uint16)) if fmt == "bf16" else cupy.asarray(B)
    dC = cupy.empty((n, n), dtype=cupy.float32)
    name = "cublas_fp16" if fmt == "fp16" else "cublas_bf16"
    ms = _median_ms(timing.cublas_launcher(name, dA, dB, dC), repeats)
    rows.append({"kernel": name, "n": n, "fmt": fmt, "ms": ms, "tflops": flops / ms / 1e9})
    cublas_ms = ms
    if fmt == "fp16":
        problem = gl.tensorcore.kernel.prepare(A, B)
        ms = _median_ms(problem.launch, repeats)
        attrs = gl.tensorcore.kernel.kernel_attributes()
        rows.append({"kernel": "wmma", "n": n, "fmt": fmt, "ms": ms, "tflops": flops / ms / 1e9,
                     "regs": attrs["regs"], "local_bytes": attrs["local_bytes"],
                     "smem_bytes": attrs["smem_bytes"]})
    for stage in stages:
        problem = hopper.prepare(A, B, stage=stage)
        ms = _median_ms(problem.launch, repeats)
        out = cupy.asnumpy(problem.C_out[:64, :64])
        ref = A[:64].astype(np.float64) @ B[:, :64].astype(np.float64)
        rows.append({"kernel": f"hopper:stage={stage}", "n": n, "fmt": fmt, "ms": ms,
                     "tflops": flops / ms / 1e9,
                     "corner_rel_err": float(np.linalg.norm(out - ref) / np.linalg.norm(ref)),
                     "adds": hopper.get_stage(stage).adds, **hopper.kernel_attributes(stage, fmt)})
    for r in rows:
        r["pct_of_cublas"] = 100 * cublas_ms / r["ms"]
    return rows


def group_m_sweep(n, repeats):
    """The persistent kernel's TFLOP/s at n^3 for several tile-group heights (L2 reuse)."""
    A, B, _ = _inputs(n, n, n, "fp16", seed=7)
    problem, rows = hopper.prepare(A, B, stage="persistent"), []
    default = hopper.GROUP_M
    for g in (1, 4, 8, 16, 32):
        hopper.GROUP_M = g
        ms = _median_ms(problem.launch, repeats)
        rows.append({"group_m": g, "n": n, "ms": ms, "tflops": 2.0 * n ** 3 / ms / 1e9})
        print(f"group_m {g:>2}: {rows[-1]['tflops']:.1f} TFLOP/s at {n}^3")
    hopper.GROUP_M = default
    return rows


def machine():
    nvcc = subprocess.run(["nvcc", "--version"], capture_output=True, text=True).stdout
    return gl.measure.machine(gpu="cupy", nvcc=nvcc.strip().splitlines()[-1:],
                              timing="CUDA events around each launch, median after 5 warm-ups")


def child(stage, fmt):
    print(json.dumps({"stage": stage, "fmt": fmt, "checks": check_stage(stage, fmt)}))


def run_children(timeout):
    results = []
    for fmt in hopper.FORMATS:
        for stage in hopper.STAGES:
            try:
                done = subprocess.run([sys.executable, __file__, "--child", stage, fmt],
                                      capture_output=True, text=True, timeout=timeout)
                if done.returncode == 0:
                    results.append(json.loads(done.stdout.strip().splitlines()[-1]))
                else:
                    results.append({"stage": stage, "fmt": fmt, "error": done.stderr[-2000:]})
            except subprocess.TimeoutExpired:
                results.append({"stage": stage, "fmt": fmt, "error": f"timeout after {timeout} s"})
            r = results[-1]
            verdict = r.get("error", "").splitlines()[-1:] if "error" in r else \
                [("ok" if all(c["ok"] for c in r["checks"]) else "WRONG") + " " +
                 " ".join(f"{c['rel_err']:.1e}/{c['rel_err_alpha_beta']:.1e}" if "rel_err" in c
                          else c["error"] for c in r["checks"])]
            print(f"check {stage:<11} {fmt}: {verdict}", flush=True)
    return results


NCU_METRIC = re.compile(r"^\s*(\S+)\s+(\S+)?\s+([0-9][0-9,.]*)\s*$")


def parse_ncu(path):
    """{metric: value} from an ``ncu --metrics ...`` text report of one kernel launch."""
    found = {}
    for line in open(path, encoding="utf-8", errors="replace"):
        m = NCU_METRIC.match(line)
        if m and "__" in m.group(1):
            found[m.group(1)] = float(m.group(3).replace(",", ""))
    return found


def merge(record_path, folder):
    """Add the Nsight Compute metrics (ncu_stall_<kernel>.txt) and the sanitizer summaries
    (san_<tool>.txt) found in ``folder`` to the record."""
    with open(record_path) as f:
        record = json.load(f)
    record["profile"] = {
        name[len("ncu_stall_"):-4]: parse_ncu(os.path.join(folder, name))
        for name in sorted(os.listdir(folder)) if name.startswith("ncu_stall_")}
    record["sanitizer"] = {}
    for tool in ("memcheck", "racecheck"):
        path = os.path.join(folder, f"san_{tool}.txt")
        if os.path.exists(path):
            lines = [ln.strip("= \n") for ln in open(path) if "SUMMARY" in ln]
            record["sanitizer"][tool] = lines[-1] if lines else "no summary"
    with open(record_path, "w") as f:
        json.dump(record, f, indent=1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--merge", nargs=2, metavar=("RECORD", "FOLDER"))
    ap.add_argument("--out")
    ap.add_argument("--sizes", type=int, nargs="+", default=[4096, 8192])
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--child", nargs=2)
    ap.add_argument("--sanitize-launch", action="store_true")
    ap.add_argument("--profile-launch")
    ap.add_argument("--stages", nargs="+", default=list(hopper.STAGES))
    args = ap.parse_args()
    if args.merge:
        return merge(*args.merge)
    if args.child:
        return child(*args.child)
    if args.sanitize_launch:
        for stage in args.stages:
            for shape in (ODD_SHAPE, (131, 251, 77)):
                A, B, C = _inputs(*shape, "fp16", seed=3)
                hopper.gemm(A, B, C, alpha=1.0, beta=0.5, stage=stage)
        print("sanitize launches done")
        return
    if args.profile_launch:
        A, B, _ = _inputs(4096, 4096, 4096, "fp16", seed=7)
        if args.profile_launch == "wmma":
            gl.tensorcore.kernel.prepare(A, B).launch()
        else:
            hopper.prepare(A, B, stage=args.profile_launch).launch()
        import cupy
        cupy.cuda.Device().synchronize()
        return
    t0 = time.time()
    for fmt in hopper.FORMATS:
        binary, route = hopper.cubin(fmt)
        print(f"compiled {fmt} via {route}: {len(binary)} bytes ({time.time() - t0:.1f} s)")
    try:
        hopper.compile_with_nvrtc(hopper.kernel_source("fp16"))
        nvrtc = "ok"
    except Exception as exc:   # noqa: BLE001 - report, the nvcc route is what runs
        nvrtc = f"failed: {str(exc)[-300:]}"
    print("nvrtc route:", nvrtc)
    record = {"machine": machine(), "nvrtc": nvrtc, "checks": run_children(timeout=90)}
    ok = [(c["stage"], c["fmt"]) for c in record["checks"]
          if "checks" in c and all(x["ok"] for x in c["checks"])]
    perf = []
    for n in args.sizes:
        for fmt in hopper.FORMATS:
            stages = [s for s in args.stages if (s, fmt) in ok]
            perf += time_size(n, fmt, stages, args.repeats)
    record["performance"] = perf
    if ("persistent", "fp16") in ok:
        record["group_m_sweep"] = group_m_sweep(max(args.sizes), args.repeats)
    print(f"\n{'kernel':<24} {'fmt':<5} {'n':>5} {'ms':>8} {'TFLOP/s':>8} {'%cuBLAS':>8} "
          f"{'regs':>5} {'local':>5}")
    for r in perf:
        print(f"{r['kernel']:<24} {r['fmt']:<5} {r['n']:>5} {r['ms']:>8.3f} {r['tflops']:>8.1f} "
              f"{r['pct_of_cublas']:>8.1f} {r.get('regs', '-')!s:>5} {r.get('local_bytes', '-')!s:>5}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()
