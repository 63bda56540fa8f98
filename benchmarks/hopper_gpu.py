"""The Hopper ladder on a GPU in one call: check every kernel and option, time every goal shape
beside cuBLAS, and write the record.

    python benchmarks/hopper_gpu.py --out DIR/hopper_h200.json    # checks, timings, record
    python benchmarks/hopper_gpu.py --child fp16                  # the checks of one format
    python benchmarks/hopper_gpu.py --sanitize-launch             # small odd launches, every kernel
    python benchmarks/hopper_gpu.py --profile-launch 128x4096x4096  # one launch of the auto plan
    python benchmarks/hopper_gpu.py --short-of-goal RECORD        # goal shapes the record misses
    python benchmarks/hopper_gpu.py --merge RECORD FOLDER         # add ncu and sanitizer reports

Checks run in child processes (a kernel that deadlocks on an mbarrier must not take the run with
it): every Hopper kernel and option (tile width, split-K, 16-bit output, the auto rule) and the
WMMA kernel (cp.async and Turing's plain copies, FP16/BF16/FP16-accumulator), at odd shapes, with
and without alpha/beta, against float64 products of the same 16-bit inputs, NaN-poisoned outputs.

Timings: random normal inputs made on the device, the same for every kernel of a shape; each
kernel captured ``batch`` times into a CUDA graph and the graph replayed between two CUDA events
(so host launch costs stay out, for our ctypes launches and for cuBLAS alike), the median of
``--repeats`` replays after warm-up. The baselines, on the same inputs in the same process:
``cupy.matmul`` (cuBLAS, FP16 in and out: the goal's baseline) and cuBLAS ``gemmEx`` FP16 in,
FP32 out (the baseline of our FP32-output kernels). Inputs are reused between launches, as
cuBLAS benchmarks do: at 128x4096x4096 and 1024^3 they fit in the 50 MB L2 for both sides.
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
from gemmlab.tensorcore import hopper, kernel, timing    # noqa: E402

GOALS = {(128, 4096, 4096): 90.0, (1024, 1024, 1024): 90.0, (8192, 4096, 1024): 90.0,
         (4096, 11008, 4096): 90.0, (8192, 8192, 8192): 100.0}
LADDER_SIZES = (4096, 8192)          # every step, FP16 and BF16: lesson 12's table
CHECK_SHAPES = [(200, 264, 136), (131, 250, 77), (384, 512, 4096), (1031, 997, 1043),
                (128, 1024, 2048)]
SANITIZE_SHAPES = [(300, 264, 200), (131, 251, 77)]


def check_configs(fmt):
    """(stage, options) of every kernel and option the checks cover."""
    o16 = {"out": fmt}
    return [("wgmma", {}), ("tma", {}), ("ws", {}), ("persistent", {}),
            ("persistent", {"tile_n": 128}), ("persistent", {"split_k": 3}),
            ("persistent", {"tile_n": 128, "split_k": 4}), ("pingpong", {}),
            ("pingpong", {"split_k": 2}), ("persistent", o16),
            ("persistent", {"tile_n": 128, "split_k": 4, **o16}), ("pingpong", o16),
            ("auto", {}), ("auto", o16)]


def fit_split(options, K):
    """``options`` with split_k at most the problem's K slices."""
    slices = max(1, hopper.ceil_div(K, hopper.BK))
    return {**options, "split_k": min(options["split_k"], slices)} if "split_k" in options else options


def _host_inputs(M, N, K, fmt, seed):
    import ml_dtypes
    rng = np.random.default_rng(seed)
    dt = np.float16 if fmt == "fp16" else ml_dtypes.bfloat16
    return (rng.standard_normal((M, K)).astype(dt), rng.standard_normal((K, N)).astype(dt),
            rng.standard_normal((M, N)).astype(np.float32))


def _rel(out, ref):
    out = np.asarray(out, dtype=np.float64)
    return float(np.linalg.norm(out - ref) / np.linalg.norm(ref))


def check_format(fmt):
    """Print one JSON line per check (the parent keeps what it got if a kernel hangs)."""
    for i, (M, N, K) in enumerate(CHECK_SHAPES):
        A, B, C = _host_inputs(M, N, K, fmt, seed=100 + i)
        ref = A.astype(np.float64) @ B.astype(np.float64)
        ref2 = 0.5 * ref - 2.0 * C.astype(np.float64)
        for stage, options in check_configs(fmt):
            options = fit_split(options, K)
            row = {"kind": "hopper", "fmt": fmt, "shape": [M, N, K], "stage": stage, **options}
            try:
                p = hopper.plan(stage, M, N, K, 132, **{k: v for k, v in options.items()})
                row["plan"] = p.describe()
                out = hopper.gemm(A, B, stage=stage, **options)
                out2 = hopper.gemm(A, B, C, alpha=0.5, beta=-2.0, stage=stage, **options)
                again = hopper.gemm(A, B, C, alpha=0.5, beta=-2.0, stage=stage, **options)
                tol = 1e-4 if options.get("out", "fp32") == "fp32" else 2e-3
                row.update(rel_err=_rel(out, ref), rel_err_alpha_beta=_rel(out2, ref2),
                           nan=int(np.isnan(np.asarray(out, np.float32)).sum()
                                   + np.isnan(np.asarray(out2, np.float32)).sum()),
                           repeatable=bool(np.array_equal(np.asarray(out2), np.asarray(again))))
                row["ok"] = bool(row["rel_err"] < tol and row["rel_err_alpha_beta"] < tol
                                 and row["nan"] == 0 and row["repeatable"])
            except Exception as exc:   # noqa: BLE001 - record it; a CUDA error ends this child
                row.update(ok=False, error=f"{type(exc).__name__}: {str(exc)[:300]}")
            print(json.dumps(row), flush=True)
        for tiling, acc, copies in (("fast", "fp32", "auto"), ("fast", "fp32", "plain"),
                                    ("lesson", "fp32", "auto"), ("wide", "fp32", "auto"),
                                    ("fast", "fp16", "auto"), ("fast", "fp16", "plain")):
            if acc == "fp16" and fmt != "fp16":
                continue
            row = {"kind": "wmma", "fmt": fmt, "shape": [M, N, K], "tiling": tiling, "acc": acc,
                   "copies": copies}
            try:
                problem = kernel.prepare(A, B, C, 0.5, -2.0, tiling, acc, copies=copies)
                problem.launch()
                out2 = problem.C_out.get()
                tol = 1e-4 if acc == "fp32" else 5e-2
                row.update(rel_err_alpha_beta=_rel(out2, ref2), nan=int(np.isnan(out2).sum()))
                row["ok"] = bool(row["rel_err_alpha_beta"] < tol and row["nan"] == 0)
            except Exception as exc:   # noqa: BLE001
                row.update(ok=False, error=f"{type(exc).__name__}: {str(exc)[:300]}")
            print(json.dumps(row), flush=True)


def passed_stages(rows):
    """Hopper stages whose every check ran (no hang cut them short) and passed, in both formats;
    "auto" is judged by the stage it picks. Only these are timed."""
    expected = {}
    for fmt in hopper.FORMATS:
        for stage, _ in check_configs(fmt):
            expected[stage] = expected.get(stage, 0) + len(CHECK_SHAPES)
    ok = {}
    for r in rows:
        if r.get("kind") == "hopper":
            ok.setdefault(r["stage"], []).append(r["ok"])
    return {s for s, n in expected.items() if len(ok.get(s, [])) == n and all(ok[s])}


def run_checks(timeout):
    rows = []
    for fmt in hopper.FORMATS:
        try:
            done = subprocess.run([sys.executable, __file__, "--child", fmt], capture_output=True,
                                  text=True, timeout=timeout)
            out, err = done.stdout, (done.stderr[-2000:] if done.returncode else "")
        except subprocess.TimeoutExpired as exc:
            out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
            err = f"timeout after {timeout} s"
        got = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        rows += got
        bad = [r for r in got if not r["ok"]]
        print(f"checks {fmt}: {len(got) - len(bad)}/{len(got)} ok" + (f"; {err}" if err else ""),
              flush=True)
        for r in bad[:12]:
            print("   WRONG", {k: v for k, v in r.items() if k not in ("kind", "fmt")}, flush=True)
        if err:
            rows.append({"kind": "child", "fmt": fmt, "ok": False, "error": err})
    return rows


# ---- timing ------------------------------------------------------------------------------------

def graph_ms(launch, repeats, target_ms=2.0):
    """(ms per launch, method): ``launch`` captured ``batch`` times in a CUDA graph, the graph
    replayed between two events; events around batches of direct launches if capture fails."""
    import cupy
    stream = cupy.cuda.Stream(non_blocking=True)
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    with stream:
        for _ in range(3):
            launch()
        start.record(stream)
        launch()
        end.record(stream)
        end.synchronize()
        single = max(cupy.cuda.get_elapsed_time(start, end), 1e-3)
        batch = int(min(400, max(5, target_ms / single)))
        try:
            stream.begin_capture()
            try:
                for _ in range(batch):
                    launch()
            finally:
                graph = stream.end_capture()
            graph.launch(stream)
            stream.synchronize()
            method = f"graph of {batch}"
            run = lambda: graph.launch(stream)              # noqa: E731
        except Exception as exc:   # noqa: BLE001 - not capturable: time direct launches
            stream.synchronize()
            method = f"events around {batch} launches ({type(exc).__name__})"
            run = lambda: [launch() for _ in range(batch)]  # noqa: E731
        times = []
        for _ in range(repeats):
            start.record(stream)
            run()
            end.record(stream)
            end.synchronize()
            times.append(cupy.cuda.get_elapsed_time(start, end) / batch)
    return statistics.median(times), method


def device_inputs(M, N, K, fmt, seed):
    """Random normal A, B on the device as 16-bit patterns (BF16 rounded to nearest even)."""
    import cupy
    rng = cupy.random.default_rng(seed)
    a = rng.standard_normal((M, K), dtype=cupy.float32)
    b = rng.standard_normal((K, N), dtype=cupy.float32)
    if fmt == "fp16":
        return a.astype(cupy.float16), b.astype(cupy.float16)

    def bf16(x):
        u = x.view(cupy.uint32)
        return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(cupy.uint16)
    return bf16(a), bf16(b)


def _baselines(A, B, fmt, repeats):
    """cupy.matmul (FP16 out) and gemmEx (FP32 out) on the same inputs: {name: ms}."""
    import cupy
    from cupy.cuda import cublas, device
    M, N = A.shape[0], B.shape[1]
    rows = {}
    if fmt == "fp16":
        C16 = cupy.empty((M, N), dtype=cupy.float16)
        rows["cupy.matmul"] = graph_ms(lambda: cupy.matmul(A, B, out=C16), repeats)
    C32 = cupy.empty((M, N), dtype=cupy.float32)
    name = "cublas_fp16" if fmt == "fp16" else "cublas_bf16"
    gemm = timing.cublas_launcher(name, A, B, C32)
    handle = device.get_cublas_handle()

    def launch():
        cublas.setStream(handle, cupy.cuda.get_current_stream().ptr)
        gemm()
    rows[name] = graph_ms(launch, repeats)
    return rows


def _corner_err(problem, A, B, fmt):
    """Relative error of C_out's first 64 x 64 against float64 (inputs read back)."""
    import ml_dtypes
    out = np.asarray(hopper.result(problem, host=True)[:64, :64], dtype=np.float64)
    dt = np.float16 if fmt == "fp16" else ml_dtypes.bfloat16
    a = A[:64].get().view(dt).astype(np.float64)
    b = B[:, :64].get().view(dt).astype(np.float64)
    ref = a @ b
    return float(np.linalg.norm(out - ref) / np.linalg.norm(ref))


def time_configs(shape, fmt, configs, repeats, label, passed=None):
    """Rows of TFLOP/s and % of both baselines for every (stage, options) on one shape."""
    M, N, K = shape
    A, B = device_inputs(M, N, K, fmt, seed=7)
    flops = 2.0 * M * N * K
    base = _baselines(A, B, fmt, repeats)
    rows = []
    for name, (ms, method) in base.items():
        rows.append({"shape": list(shape), "fmt": fmt, "kernel": name, "ms": ms,
                     "tflops": flops / ms / 1e9, "method": method, "set": label})
    matmul_ms = base.get("cupy.matmul", (None,))[0]
    gemmex_ms = base["cublas_fp16" if fmt == "fp16" else "cublas_bf16"][0]
    for stage, options in configs:
        if stage != "wmma" and passed is not None:
            picked = hopper.plan(stage, M, N, K, **{k: v for k, v in options.items()
                                                   if k != "out"}).stage.name
            if stage not in passed or picked not in passed:
                print(f"  skip {stage} {options}: its checks did not all pass")
                continue
        if stage == "wmma":
            problem = kernel.prepare(A, B, bits_as=fmt)
            desc, attrs, err = "wmma (fast tiling)", kernel.kernel_attributes(fmt=fmt), None
        else:
            try:
                problem = hopper.prepare(A, B, stage=stage, **_bits(fmt), **options)
            except ValueError as exc:          # e.g. a split larger than the K slices
                print(f"  skip {stage} {options}: {exc}")
                continue
            desc, attrs = problem.plan.describe(), hopper.attributes(problem.plan, fmt)
            problem.launch()
            err = _corner_err(problem, A, B, fmt)
        ms, method = graph_ms(problem.launch, repeats)
        out = options.get("out", "fp32")
        row = {"shape": list(shape), "fmt": fmt, "kernel": f"hopper:stage={stage}"
               if stage != "wmma" else "wmma", "options": options, "plan": desc, "out": out,
               "ms": ms, "tflops": flops / ms / 1e9, "method": method, "corner_rel_err": err,
               "pct_of_gemmex_fp32_out": 100 * gemmex_ms / ms, "set": label,
               **{k: attrs[k] for k in ("regs", "local_bytes", "smem_bytes")}}
        if matmul_ms:
            row["pct_of_cupy_matmul"] = 100 * matmul_ms / ms
        rows.append(row)
        del problem
    return rows


def _bits(fmt):
    return {"bits_as": fmt}


def shape_configs(shape, fmt):
    """What to time at a goal shape: the rule's pick and the alternatives it chose between."""
    M, N, K = shape
    slices = hopper.ceil_div(K, hopper.BK)
    found = []
    for out in ("fp32", fmt):
        o = {} if out == "fp32" else {"out": out}
        found += [("auto", o), ("persistent", o), ("pingpong", o)]
        for s in (1, 2, 4, 8):
            if s <= slices:
                found.append(("persistent", {"tile_n": 128, "split_k": s, **o}))
        for s in (2, 4):
            if s <= slices and M * N <= 2048 * 2048:
                found.append(("pingpong", {"split_k": s, **o}))
    return found


def machine():
    from gemmlab import cudacompile
    return gl.measure.machine(gpu="cupy", compiler=cudacompile.available()[1],
                              timing="CUDA graph of repeated launches, replayed between CUDA "
                                     "events; median of the replays")


# ---- sanitizer, profile, record -----------------------------------------------------------------

def sanitize_launches():
    for fmt in hopper.FORMATS:
        for shape in SANITIZE_SHAPES:
            A, B, C = _host_inputs(*shape, fmt, seed=3)
            for stage, options in check_configs(fmt):
                hopper.gemm(A, B, C, alpha=1.0, beta=0.5, stage=stage,
                            **fit_split(options, shape[2]))
            for copies in kernel.COPIES:
                kernel.prepare(A, B, C, 1.0, 0.5, copies=copies).launch()
    import cupy
    cupy.cuda.Device().synchronize()
    print("sanitize launches done")


def short_of_goal(record_path):
    """The goal shapes whose auto plan (16-bit out) stays under its goal, as MxNxK words."""
    record = json.load(open(record_path))
    for (M, N, K), goal in GOALS.items():
        rows = [r for r in record["performance"] if r["shape"] == [M, N, K] and r.get("set") ==
                "goals" and r["kernel"] == "hopper:stage=auto" and r["out"] == "fp16"]
        if rows and rows[0]["pct_of_cupy_matmul"] < goal:
            print(f"{M}x{N}x{K}")


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
    """Add the Nsight Compute metrics (ncu_<shape>.txt) and the sanitizer summaries
    (san_<tool>.txt) found in ``folder`` to the record."""
    with open(record_path) as f:
        record = json.load(f)
    record["profile"] = {
        name[len("ncu_"):-4]: parse_ncu(os.path.join(folder, name))
        for name in sorted(os.listdir(folder)) if name.startswith("ncu_")}
    record["sanitizer"] = {}
    for tool in ("memcheck", "racecheck"):
        path = os.path.join(folder, f"san_{tool}.txt")
        if os.path.exists(path):
            lines = [ln.strip("= \n") for ln in open(path) if "SUMMARY" in ln]
            record["sanitizer"][tool] = lines[-1] if lines else "no summary"
    with open(record_path, "w") as f:
        json.dump(record, f, indent=1)


def print_table(perf):
    print(f"\n{'shape':<17} {'kernel':<22} {'plan':<44} {'TFLOP/s':>8} {'%mm':>6} {'%gx32':>6} "
          f"{'regs':>4}")
    for r in perf:
        if r.get("set") != "goals":
            continue
        print(f"{'x'.join(map(str, r['shape'])):<17} {r['kernel'][-22:]:<22} "
              f"{r.get('plan', '')[:44]:<44} {r['tflops']:>8.1f} "
              f"{r.get('pct_of_cupy_matmul', float('nan')):>6.1f} "
              f"{r.get('pct_of_gemmex_fp32_out', float('nan')):>6.1f} {r.get('regs', '-')!s:>4}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--child")
    ap.add_argument("--sanitize-launch", action="store_true")
    ap.add_argument("--profile-launch")
    ap.add_argument("--short-of-goal")
    ap.add_argument("--merge", nargs=2, metavar=("RECORD", "FOLDER"))
    ap.add_argument("--skip-ladder", action="store_true")
    args = ap.parse_args()
    if args.merge:
        return merge(*args.merge)
    if args.child:
        return check_format(args.child)
    if args.sanitize_launch:
        return sanitize_launches()
    if args.short_of_goal:
        return short_of_goal(args.short_of_goal)
    if args.profile_launch:
        M, N, K = gl.bench.parse_shape(args.profile_launch)
        A, B = device_inputs(M, N, K, "fp16", seed=7)
        hopper.prepare(A, B, stage="auto", out="fp16").launch()
        import cupy
        cupy.cuda.Device().synchronize()
        return
    t0 = time.time()
    for fmt in hopper.FORMATS:
        path, _ = hopper.compile_format(fmt)
        print(f"{fmt}: {path.name} ({time.time() - t0:.1f} s)", flush=True)
    record = {"machine": machine(), "goals": {"x".join(map(str, s)): g for s, g in GOALS.items()},
              "resources": {f: hopper.resources(f) for f in hopper.FORMATS}}
    record["checks"] = run_checks(timeout=60)
    passed = passed_stages(record["checks"])
    print(f"checks done ({time.time() - t0:.0f} s); stages passed: {sorted(passed)}", flush=True)
    perf = []
    for shape in GOALS:
        perf += time_configs(shape, "fp16", shape_configs(shape, "fp16"), args.repeats, "goals",
                             passed)
        print(f"timed {shape} ({time.time() - t0:.0f} s)", flush=True)
        if args.out:
            with open(args.out, "w") as f:
                json.dump({**record, "performance": perf}, f, indent=1)
    if not args.skip_ladder:
        ladder = [(s, {}) for s in hopper.STAGES] + [("auto", {})]
        for n in LADDER_SIZES:
            for fmt in hopper.FORMATS:
                configs = ([("wmma", {})] if fmt == "fp16" else []) + ladder
                perf += time_configs((n, n, n), fmt, configs, args.repeats, "ladder", passed)
            print(f"ladder {n} ({time.time() - t0:.0f} s)", flush=True)
    record["performance"] = perf
    print_table(perf)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()
