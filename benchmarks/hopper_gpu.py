"""The Hopper ladder on a GPU in one call: check every kernel and option, time every goal shape
beside cuBLAS, and write the record.

    python benchmarks/hopper_gpu.py --out DIR/hopper_h200.json    # checks, timings, record
    python benchmarks/hopper_gpu.py --child fp16                  # the checks of one format
    python benchmarks/hopper_gpu.py --sanitize-launch             # small odd launches, every kernel
    python benchmarks/hopper_gpu.py --profile-specs RECORD        # what ncu should profile
    python benchmarks/hopper_gpu.py --profile-launch 4096x4096x4096:tma ...  # one launch each
    python benchmarks/hopper_gpu.py --merge RECORD FOLDER SPECS   # add ncu and sanitizer reports

Checks run in child processes (a kernel that deadlocks on an mbarrier must not take the run with
it): every Hopper kernel and option (tile width, split-K, 16-bit output, the auto rule) and the
WMMA kernel (cp.async and Turing's plain copies, FP16/BF16/FP16-accumulator), at odd shapes, with
and without alpha/beta, against float64 products of the same 16-bit inputs, NaN-poisoned outputs.

Timings: random normal inputs made on the device, the same for every kernel of a shape; each
kernel launched ``batch`` times behind a GPU-side wait, between two CUDA events (so host launch
costs stay out, for our ctypes launches and for cuBLAS alike: see :func:`queued_ms`), the median
of ``--repeats`` batches after warm-up. The baselines, on the same inputs in the same process:
``cupy.matmul`` (cuBLAS, FP16 in and out: the goal's baseline) and cuBLAS ``gemmEx`` FP16 in,
FP32 out (the baseline of our FP32-output kernels). Inputs are reused between launches, as
cuBLAS benchmarks do: at 128x4096x4096 and 1024^3 they fit in the 50 MB L2 for both sides.
"""
import argparse
import functools
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
            ("persistent", {"tile_n": 128, "split_k": 4}), ("persistent", {"tile_n": 64}),
            ("persistent", {"tile_n": 64, "split_k": 2, **o16}), ("pingpong", {}),
            ("pingpong", {"split_k": 2}), ("persistent", o16),
            ("persistent", {"tile_n": 128, "split_k": 4, **o16}), ("pingpong", o16),
            ("auto", {}), ("auto", o16), ("persistent", {"tile_m": 64}),
            ("persistent", {"tile_m": 64, "tile_n": 128, "split_k": 3, **o16}),
            ("persistent", {"tile_m": 64, "tile_n": 64, "split_k": 2})]


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

SPIN = r"""extern "C" __global__ void spin(unsigned long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}
"""


@functools.lru_cache(maxsize=None)
def _spin():
    """A one-thread kernel that keeps the GPU busy for a given number of nanoseconds."""
    import cupy
    from gemmlab import cudacompile
    cc = cupy.cuda.Device().compute_capability
    path, _ = cudacompile.cached_cubin(SPIN, cudacompile.arch_name((int(cc[:-1]), int(cc[-1]))),
                                       "spin.cu")
    return cupy.RawModule(path=str(path)).get_function("spin")


def queued_ms(launch, repeats, target_ms=2.0):
    """(ms per launch, method): ``batch`` launches queued behind a GPU-side wait long enough for
    the host to queue them all, timed between two CUDA events after the wait. The GPU then runs
    them back to back, so the host's cost per launch (our ctypes call, CuPy's and cuBLAS's Python
    and library overhead) stays out of every figure alike."""
    import cupy
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    for _ in range(3):
        launch()
    start.record()
    launch()
    end.record()
    end.synchronize()
    single = max(cupy.cuda.get_elapsed_time(start, end), 1e-3)
    batch = int(min(400, max(5, target_ms / single)))
    t = time.perf_counter()
    for _ in range(batch):
        launch()
    host_ms = (time.perf_counter() - t) * 1e3
    cupy.cuda.Device().synchronize()
    wait_ns = np.uint64((2 * host_ms + 1) * 1e6)
    times = []
    for _ in range(repeats):
        _spin()((1,), (1,), (wait_ns,))
        start.record()
        for _ in range(batch):
            launch()
        end.record()
        end.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, end) / batch)
    return statistics.median(times), f"events around {batch} queued launches"


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
        rows["cupy.matmul"] = queued_ms(lambda: cupy.matmul(A, B, out=C16), repeats)
    C32 = cupy.empty((M, N), dtype=cupy.float32)
    name = "cublas_fp16" if fmt == "fp16" else "cublas_bf16"
    gemm = timing.cublas_launcher(name, A, B, C32)
    handle = device.get_cublas_handle()

    def launch():
        cublas.setStream(handle, cupy.cuda.get_current_stream().ptr)
        gemm()
    rows[name] = queued_ms(launch, repeats)
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
    import cupy
    M, N, K = shape
    A, B = device_inputs(M, N, K, fmt, seed=7)
    flops = 2.0 * M * N * K
    base = _baselines(A, B, fmt, repeats)
    rows = []
    cubic = {"n": M} if M == N == K else {}
    for name, (ms, method) in base.items():
        rows.append({"shape": list(shape), **cubic, "fmt": fmt, "kernel": name, "ms": ms,
                     "tflops": flops / ms / 1e9, "method": method, "set": label,
                     "out": "fp16" if name == "cupy.matmul" else "fp32", "pct_of_cublas": 100.0})
    matmul_ms = base.get("cupy.matmul", (None,))[0]
    gemmex_ms = base["cublas_fp16" if fmt == "fp16" else "cublas_bf16"][0]
    for stage, options in configs:
        if stage != "wmma" and passed is not None:
            picked = hopper.plan(stage, M, N, K, **{k: v for k, v in options.items()
                                                   if k not in ("out", "group_m")}).stage.name
            if stage not in passed or picked not in passed:
                print(f"  skip {stage} {options}: its checks did not all pass")
                continue
        if stage == "wmma":
            copies = options.get("copies", "auto")
            problem = kernel.prepare(A, B, bits_as=fmt, copies=copies)
            desc, err, picked = f"wmma (fast tiling, {copies} copies)", None, {}
            attrs = kernel.kernel_attributes(fmt=fmt, copies=copies)
        else:
            try:
                problem = hopper.prepare(A, B, stage=stage, **_bits(fmt), **options)
            except ValueError as exc:          # e.g. a split larger than the K slices
                print(f"  skip {stage} {options}: {exc}")
                continue
            desc, attrs = problem.plan.describe(), hopper.attributes(problem.plan, fmt)
            picked = {"step": problem.plan.stage.name, "tile_n": problem.plan.shape.bn,
                      "split_k": problem.plan.split_k, "group_m": problem.group_m}
            problem.launch()
            err = _corner_err(problem, A, B, fmt)
        ms, method = queued_ms(problem.launch, repeats)
        intact = bool(cupy.isfinite(A.view(cupy.float16)).all()) if fmt == "fp16" else None
        out = options.get("out", "fp32")
        name = f"hopper:stage={stage}" if stage != "wmma" else \
            "wmma" + ("" if copies == "auto" else f":copies={copies}")
        row = {"shape": list(shape), **cubic, "fmt": fmt, "kernel": name, "options": options,
               "plan": desc, "out": out,
               "ms": ms, "tflops": flops / ms / 1e9, "method": method, "corner_rel_err": err,
               "inputs_finite_after": intact, **picked,
               "pct_of_gemmex_fp32_out": 100 * gemmex_ms / ms, "set": label,
               **{k: attrs[k] for k in ("regs", "local_bytes", "smem_bytes")}}
        if matmul_ms:
            row["pct_of_cupy_matmul"] = 100 * matmul_ms / ms
        # like for like: FP32 output against gemmEx's FP32 output, 16-bit against cupy.matmul's
        row["pct_of_cublas"] = row["pct_of_gemmex_fp32_out"] if out == "fp32" \
            else row.get("pct_of_cupy_matmul")
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
            if s <= min(4, slices) and M * N <= 2048 * 4096:
                found.append(("persistent", {"tile_n": 64, "split_k": s, **o}))
        for s in (2, 4):
            if s <= slices and M * N <= 2048 * 2048:
                found.append(("pingpong", {"split_k": s, **o}))
    if M * N >= 8192 * 4096:                 # the tile order: rows of tiles walked together
        for g in (1, 4, 16):
            found += [("persistent", {"out": fmt, "group_m": g}),
                      ("pingpong", {"out": fmt, "group_m": g})]
    return found


def _matmul_compute_type():
    """The cuBLAS compute type cupy.matmul uses for FP16 (CuPy's own setting)."""
    try:
        import cupy
        from cupy._core import _routines_linalg as linalg
        return linalg.compute_type_to_str(linalg.get_compute_type(cupy.dtype(cupy.float16)))
    except Exception as exc:   # noqa: BLE001 - a private CuPy name; record what happened
        return f"unknown ({type(exc).__name__})"


def machine():
    from gemmlab import cudacompile
    return gl.measure.machine(gpu="cupy", compiler=cudacompile.available()[1],
                              cupy_matmul_fp16_compute_type=_matmul_compute_type(),
                              timing="CUDA events around a batch of launches queued behind a "
                                     "GPU-side wait (no host launch cost); median of the batches")


# ---- sanitizer, profile, record -----------------------------------------------------------------

FP8_SANITIZED = [("persistent", {}), ("persistent", {"tile_n": 128}), ("persistent", {"tile_n": 64}),
                 ("pingpong", {"split_k": 2}), ("persistent", {"tile_m": 64, "split_k": 2}),
                 ("persistent", {"tile_m": 64, "tile_n": 128}),
                 ("persistent", {"tile_m": 64, "tile_n": 64})]
# The staged epilogue (16-bit output only) at more 128 x 256 tiles than SMs, K split 2 ways:
# blocks hand the staging buffer back and forth over several units, stored and not
STAGED_SHAPE = (2051, 2051, 136)


def sanitize_launches():
    """Every kernel and option once per format: FP16 on the fast path, BF16 padded (odd N)."""
    for fmt, shape in zip(hopper.FORMATS, SANITIZE_SHAPES, strict=True):
        A, B, C = _host_inputs(*shape, fmt, seed=3)
        for stage, options in check_configs(fmt):
            hopper.gemm(A, B, C, alpha=1.0, beta=0.5, stage=stage, **fit_split(options, shape[2]))
        for split_k in (1, 2):
            hopper.gemm(A, B, C, alpha=1.0, beta=0.5, stage="persistent", out=fmt,
                        epilogue="staged", **fit_split({"split_k": split_k}, shape[2]))
        for copies in kernel.COPIES:
            kernel.prepare(A, B, C, 1.0, 0.5, copies=copies).launch()
        A, B, C = _host_inputs(*STAGED_SHAPE, fmt, seed=4)
        hopper.gemm(A, B, C, alpha=1.0, beta=0.5, stage="persistent", out=fmt, epilogue="staged",
                    split_k=2)
    import ml_dtypes
    rng = np.random.default_rng(3)
    M, N, K = 131, 251, 300                          # K: 3 slices of 128 (split-K), padded
    A8, B8 = (rng.standard_normal(s).astype(ml_dtypes.float8_e4m3fn) for s in ((M, K), (K, N)))
    C = rng.standard_normal((M, N)).astype(np.float32)
    for stage, options in FP8_SANITIZED:              # the FP8 rung: every kernel once, K padded
        for out in hopper.OUTPUTS:
            hopper.gemm(A8, B8, C, alpha=1.0, beta=0.5, stage=stage, out=out, **options)
    for out in ("bf16", "fp16"):                     # the staged epilogue: 16-bit output only
        hopper.gemm(A8, B8, C, alpha=1.0, beta=0.5, stage="persistent", out=out,
                    epilogue="staged", split_k=2)
    import cupy
    cupy.cuda.Device().synchronize()
    print("sanitize launches done")


def goal_rows(record):
    """{shape: the auto plan's row with 16-bit output} at every goal shape (FP16)."""
    return {tuple(r["shape"]): r for r in record["shapes"]
            if r["kernel"] == "hopper:stage=auto" and r["out"] == "fp16"}


PROFILED_STEPS = ("wmma", "wgmma", "tma", "ws", "persistent", "pingpong")


def profile_specs(record_path):
    """What Nsight Compute profiles: each step at 4096^3 (FP32 out, as the ladder's rows), and
    the auto plan (16-bit out) of every goal shape that stays under its goal."""
    rows = goal_rows(json.load(open(record_path)))
    specs = [f"4096x4096x4096:{s}" for s in PROFILED_STEPS]
    specs += [f"{M}x{N}x{K}:auto16" for (M, N, K), goal in GOALS.items()
              if (M, N, K) in rows and rows[(M, N, K)]["pct_of_cupy_matmul"] < goal]
    print(" ".join(specs))


def profile_launch(specs):
    """One launch of each "MxNxK:stage" spec, in order (ncu profiles them one by one)."""
    import cupy
    for spec in specs:
        shape, _, stage = spec.partition(":")
        M, N, K = gl.bench.parse_shape(shape)
        A, B = device_inputs(M, N, K, "fp16", seed=7)
        if stage == "wmma":
            kernel.prepare(A, B).launch()
        elif stage == "auto16":
            hopper.prepare(A, B, stage="auto", out="fp16").launch()
        else:
            hopper.prepare(A, B, stage=stage).launch()
        cupy.cuda.Device().synchronize()


NCU_METRIC = re.compile(r"^\s*(\S+)\s+(\S+)?\s+([0-9][0-9,.]*)\s*$")


NCU_KERNEL = re.compile(r"^\s+(\w+)\s+\(\d+, \d+, \d+\)x\(\d+, \d+, \d+\)")


def parse_ncu(path):
    """[(kernel name, {metric: value}), ...] from an ``ncu --metrics ...`` text report, one entry
    per profiled launch, in launch order."""
    found = []
    for line in open(path, encoding="utf-8", errors="replace"):
        k = NCU_KERNEL.match(line)
        if k:
            found.append((k.group(1), {}))
            continue
        m = NCU_METRIC.match(line)
        if m and "__" in m.group(1) and found:
            found[-1][1][m.group(1)] = float(m.group(3).replace(",", ""))
    return found


def merge(record_path, folder, specs=""):
    """Add the Nsight Compute metrics (ncu.txt, one launch per spec of ``specs``) and the
    sanitizer summaries (san_<tool>.txt) found in ``folder`` to the record. Steps at 4096^3 are
    keyed by their name, goal shapes by MxNxK."""
    with open(record_path) as f:
        record = json.load(f)
    record["profile"] = {}
    path = os.path.join(folder, "ncu.txt")
    if os.path.exists(path):
        launches = parse_ncu(path)
        for spec, (name, metrics) in zip(specs.split(), launches, strict=True):
            shape, _, stage = spec.partition(":")
            key = stage if shape == "4096x4096x4096" and stage != "auto16" else shape
            record["profile"][key] = {"kernel": name, **metrics}
    record["sanitizer"] = {}
    for tool in ("memcheck", "racecheck"):
        path = os.path.join(folder, f"san_{tool}.txt")
        if os.path.exists(path):
            lines = [ln.strip("= \n") for ln in open(path) if "SUMMARY" in ln]
            record["sanitizer"][tool] = lines[-1] if lines else "no summary"
    with open(record_path, "w") as f:
        json.dump(record, f, indent=1)


def print_table(rows):
    print(f"\n{'shape':<17} {'kernel':<22} {'plan':<44} {'TFLOP/s':>8} {'%mm':>6} {'%gx32':>6} "
          f"{'regs':>4}")
    for r in rows:
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
    ap.add_argument("--profile-launch", nargs="+", metavar="MxNxK:STAGE")
    ap.add_argument("--profile-specs", metavar="RECORD")
    ap.add_argument("--merge", nargs=3, metavar=("RECORD", "FOLDER", "SPECS"))
    ap.add_argument("--skip-ladder", action="store_true")
    args = ap.parse_args()
    if args.merge:
        return merge(*args.merge)
    if args.child:
        return check_format(args.child)
    if args.sanitize_launch:
        return sanitize_launches()
    if args.profile_specs:
        return profile_specs(args.profile_specs)
    if args.profile_launch:
        return profile_launch(args.profile_launch)
    t0 = time.time()
    for fmt in hopper.FORMATS:
        path, _ = hopper.compile_format(fmt)
        print(f"{fmt}: {path.name} ({time.time() - t0:.1f} s)", flush=True)
    record = {"machine": machine(), "goals": {"x".join(map(str, s)): g for s, g in GOALS.items()},
              "resources": {f: hopper.resources(f) for f in hopper.FORMATS}}
    record["checks"] = run_checks(timeout=60)
    passed = passed_stages(record["checks"])
    print(f"checks done ({time.time() - t0:.0f} s); stages passed: {sorted(passed)}", flush=True)
    shapes, perf = [], []
    for shape in GOALS:
        shapes += time_configs(shape, "fp16", shape_configs(shape, "fp16"), args.repeats, "goals",
                               passed)
        print(f"timed {shape} ({time.time() - t0:.0f} s)", flush=True)
        if args.out:
            with open(args.out, "w") as f:
                json.dump({**record, "shapes": shapes}, f, indent=1)
    record["shapes"] = shapes
    if not args.skip_ladder:
        ladder = [(s, {}) for s in hopper.STAGES] + [("auto", {})]
        for n in LADDER_SIZES:
            for fmt in hopper.FORMATS:
                configs = ([("wmma", {}), ("wmma", {"copies": "plain"})] if fmt == "fp16"
                           else []) + ladder
                perf += time_configs((n, n, n), fmt, configs, args.repeats, "ladder", passed)
            print(f"ladder {n} ({time.time() - t0:.0f} s)", flush=True)
    record["performance"] = perf
    print_table(shapes)
    for (M, N, K), r in goal_rows(record).items():
        goal = GOALS[(M, N, K)]
        print(f"goal {M}x{N}x{K}: auto ({r['plan']}) {r['pct_of_cupy_matmul']:.1f}% of "
              f"cupy.matmul (goal {goal:.0f}%)")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()
