"""Library speed timed fairly (issue 39): our kernels against the best library, in one run.

    python benchmarks/library_gpu.py --out DIR/library_h200.json [--parts fp16 fp32 fp8 nvrtc]

Every launch is timed by ``gl.measure.flushed_ms`` (Triton do_bench's method: an L2 flush queued
before each launch, each launch between its own two events, median of 50), ours and the
libraries' alike, on the same device inputs (random normal) in the same process; in the fp16
part every launch of a shape is timed in turn, 5 rounds of 10 (``interleaved_ms``), since an H100
timed one kernel after another ran the first of ours up to 20% slower than the same kernel
timed later (2026-12-06, RESULTS.md). The baseline of
a shape is the fastest of ``gl.tensorcore.libraries`` (cuBLAS through CuPy, cuBLASLt with an
autotuned plan through nvmath-python, torch.matmul, an autotuned Triton kernel), each named in
the record.

- fp16: the issue's nine shapes, FP16 in and FP16 out: the Hopper auto plan and the
  alternatives it chose between (tile width, split-K, ping-pong), the staged epilogue (128 x 256
  tiles whose stores overlap the next tile's MMAs), wherever 128 x 128 tiles fill less than two
  waves the 64-row tiles (unsplit and split), the WMMA kernel (FP32 out, also against cuBLAS
  gemmEx FP16 -> FP32), and at 4096^3 and 8192^3 every step of the ladder (FP32 out); achieved
  bytes per second beside each row (the decode shapes are memory-bound);
- fp32: ``unrolled`` at 2048^3, 4096^3 and 8192^3 against the best FP32 SGEMM (TF32 off), and
  ``gl.gemm``'s host overhead per call, with and without its cached launch configuration;
- fp8: the FP8 rung (the Hopper persistent kernels built for E4M3 inputs, BF16 out; the staged
  epilogue; the 64-row tiles at decode shapes) against torch._scaled_mm (E4M3 in, per-tensor
  scales, BF16 out: cuBLASLt's FP8 GEMM) on the same bytes, each accumulation mode against the
  library's same mode (fast: the Tensor Core's own sums; promoted: FP32 running sums,
  use_fast_accum=False), with BF16 torch.matmul beside them; each row's error against float64 of
  the FP8 inputs;
- nvrtc: the NVRTC log of one WMMA build per architecture (why a resource report is empty).
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
from gemmlab import cudacompile, measure                               # noqa: E402
from gemmlab.kernels import launch as gemm_launch                      # noqa: E402
from gemmlab.tensorcore import hopper, kernel, libraries, timing       # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_clocks                                                      # noqa: E402
from hopper_gpu import _corner_err, device_inputs                      # noqa: E402

SHAPES = [(16, 8192, 8192), (64, 8192, 8192), (128, 4096, 4096), (1024, 1024, 1024),
          (2048, 2048, 2048), (8192, 4096, 1024), (4096, 4096, 4096), (4096, 11008, 4096),
          (8192, 8192, 8192)]
HOPPER_GOALS = {(4096, 4096, 4096): 100, (8192, 8192, 8192): 100, (4096, 11008, 4096): 100}
FP32_GOALS = {2048: 80, 4096: 90, 8192: 90}
FP8_SHAPES = [(4096, 4096, 4096), (8192, 8192, 8192), (4096, 11008, 4096), (64, 8192, 8192)]
REPEATS = 50
ROUNDS = 5
HBM_DATASHEET_GBS = 4800


def goal(shape):
    return HOPPER_GOALS.get(shape, 90)


def ms_of(launch, events="cupy", repeats=REPEATS):
    return statistics.median(measure.flushed_ms(launch, repeats, events=events))


def rate(shape, ms, nbytes=None):
    M, N, K = shape
    row = {"ms": ms, "tflops": 2.0 * M * N * K / ms / 1e9}
    if nbytes:
        row["gbs"] = nbytes / ms / 1e6
    return row


def copy_gbs():
    """Device-to-device copy of 2 GiB, bytes read plus written per second (the HBM ceiling)."""
    import cupy
    src = cupy.ones(1 << 29, dtype=cupy.float32)
    dst = cupy.empty_like(src)
    return 2 * src.nbytes / ms_of(lambda: cupy.copyto(dst, src), repeats=10) / 1e6


def time_libraries(A, B, out, shape, nbytes):
    """Rows of each library, the baseline's (name, ms) and the libraries left out."""
    found, missing = libraries.launchers(A, B, out)
    ms = {name: ms_of(launch) for name, launch in found.items()}
    rows = [{"kernel": name, **rate(shape, t, nbytes)} for name, t in ms.items()]
    return rows, libraries.best(ms), missing


DECODE_BLOCKS = 2 * 132        # 64-row tiles x splits: at most two waves of the H100/H200's SMs
DECODE_SPLIT_SLICES = 16       # ... and each split at least 16 slices (K = 1024)


def few_tiles(M, N):
    """Whether 128 x 128 tiles leave the SMs short of two full waves (decode, small problems):
    where the 64-row tiles are worth timing too."""
    tiles_m, tiles_n = hopper.SHAPES["narrow"].tiles(M, N)
    return tiles_m * tiles_n < DECODE_BLOCKS


def decode_configs(M, N, slices, min_slices, **options):
    """The 64-row tiles, unsplit and split while that fills at most two waves, each split
    keeping ``min_slices`` slices."""
    found = []
    for name in ("decode64", "decode128", "decode256"):
        shape = hopper.SHAPES[name]
        tiles_m, tiles_n = shape.tiles(M, N)
        found += [("persistent", {"tile_m": 64, "tile_n": shape.bn, "split_k": s, **options})
                  for s in (1, 2, 4) if s * tiles_m * tiles_n <= DECODE_BLOCKS
                  and (s == 1 or slices // s >= min_slices)]
    return found


def cluster_configs(M, **options):
    """From 1024 rows up, the 128 x 256 tiles in clusters of two that share B's slices, with the
    direct and the staged epilogue."""
    if M < 1024:
        return []
    return [("persistent", {"cluster": 2, **options}),
            ("persistent", {"cluster": 2, "epilogue": "staged", **options})]


def hopper_configs(shape):
    """The auto plan and the alternatives it chose between, 16-bit out; where 128 x 128 tiles
    fill less than two waves (decode, 128 x 4096 x 4096, 1024^3, 2048^3) also the 64-row tiles;
    from 1024 rows up, the 128 x 256 tiles in clusters of two (direct and staged)."""
    M, N, K = shape
    o = {"out": "fp16"}
    found = [("auto", o), ("persistent", o), ("persistent", {"epilogue": "staged", **o}),
             ("pingpong", o), ("persistent", {"tile_n": 128, **o})]
    found += cluster_configs(M, **o)
    slices = hopper.ceil_div(K, hopper.BK)
    if M <= 128:
        for tile_n in (64, 128):
            found += [("persistent", {"tile_n": tile_n, "split_k": s, **o})
                      for s in (2, 4, 8) if s <= slices]
    if few_tiles(M, N):
        found += decode_configs(M, N, slices, DECODE_SPLIT_SLICES, **o)
    return found


def prepared(A, B, configs, bits_as, rows):
    """(stage, options, its Problem) for each (stage, options) that plans at this shape; for one
    that does not, a row in ``rows`` saying why."""
    for stage, options in configs:
        try:
            problem = hopper.prepare(A, B, stage=stage, bits_as=bits_as, **options)
        except ValueError as exc:
            rows.append({"kernel": f"hopper:{stage}", "options": options, "skipped": str(exc)})
            continue
        yield stage, options, problem


def interleaved_samples(launches, order=None, rounds=ROUNDS, per_round=REPEATS // ROUNDS):
    """Each launch ({key: zero-argument launch}) timed in ``rounds`` round-robin rounds, in
    ``order`` (default the dict's), ``per_round`` flushed launches at a time: {key: [[ms, ...]
    per round]} and {key: [(start, end) unix time per round]}."""
    order = list(order or launches)
    samples, spans = {key: [] for key in order}, {key: [] for key in order}
    for _ in range(rounds):
        for key in order:
            start = time.time()
            samples[key].append(measure.flushed_ms(launches[key], per_round, events="cupy"))
            spans[key].append((start, time.time()))
    return samples, spans


def interleaved_ms(launches):
    """Median ms of each launch over :func:`interleaved_samples`' rounds: a clock that drifts
    while a shape is timed (an H100 at its power cap) weighs on every kernel alike, not on
    whichever came first."""
    samples, _ = interleaved_samples(launches)
    return {key: statistics.median(ms for one in rounds for ms in one)
            for key, rounds in samples.items()}


def our_row(stage, options, problem, A, B, shape, ms, base_ms, nbytes):
    """The record's row of one of our plans, timed at ``ms``, against the baseline's ``base_ms``."""
    p = problem.plan
    return {"kernel": f"hopper:{stage}", "options": options, "plan": p.describe(),
            "picked": {"stage": p.stage.name, "tile_m": p.shape.bm, "tile_n": p.shape.bn,
                       "split_k": p.split_k, "epilogue": p.epilogue, "cluster": p.shape.cluster},
            "out": options.get("out", "fp32"), "corner_rel_err": _corner_err(problem, A, B, "fp16"),
            **rate(shape, ms, nbytes), "pct_of_best": 100 * base_ms / ms}


def part_fp16(record):
    """Each shape's libraries, our plans, gemmEx (FP32 out), WMMA and (4096^3, 8192^3) the ladder,
    all timed by interleaved_ms in one round-robin; the SM clock, power and clock-event reasons
    sampled while each shape was timed go beside its row (``gpu_clocks``)."""
    with gpu_clocks.Sampler() as clocks:
        timed = [fp16_shape(shape) for shape in SHAPES]
    rows = []
    for row, span in timed:
        row["clocks"] = clocks.during(span)
        rows.append(row)
        print(f"{'x'.join(map(str, row['shape'])):>17}  clocks {row['clocks']}", flush=True)
    record["fp16"] = rows


def fp16_shape(shape):
    """One shape's row of :func:`part_fp16`, and the wall-clock span of its timing."""
    import cupy
    M, N, K = shape
    A, B = device_inputs(M, N, K, "fp16", seed=7)
    nbytes = 2 * (M * K + K * N + M * N)
    out = cupy.empty((M, N), dtype=cupy.float16)
    found, missing = libraries.launchers(A, B, out)
    skipped = []
    ours = list(prepared(A, B, hopper_configs(shape), "fp16", skipped))
    ladder = list(prepared(A, B, [(s, {}) for s in hopper.STAGES], "fp16", skipped)) \
        if shape in ((4096, 4096, 4096), (8192, 8192, 8192)) else []
    c32 = cupy.empty((M, N), dtype=cupy.float32)
    wmma = kernel.prepare(A, B, bits_as="fp16")
    launches = {**{("library", name): launch for name, launch in found.items()},
                **{("ours", i): problem.launch for i, (_, _, problem) in enumerate(ours)},
                **{("ladder", i): problem.launch for i, (_, _, problem) in enumerate(ladder)},
                ("gemmex",): timing.cublas_launcher("cublas_fp16", A, B, c32),
                ("wmma",): wmma.launch}
    for launch in launches.values():       # each once before any timing: NVRTC, autotuning
        launch()
    start = time.time()
    ms = interleaved_ms(launches)
    span = (start, time.time())
    best_name, best_ms = libraries.best({name: ms["library", name] for name in found})
    lib_rows = [{"kernel": name, **rate(shape, ms["library", name], nbytes),
                 "pct_of_best": 100 * best_ms / ms["library", name]} for name in found]
    our_rows = skipped + [our_row(*entry, A, B, shape, ms["ours", i], best_ms, nbytes)
                          for i, entry in enumerate(ours)]
    gemmex_ms, wmma_ms = ms["gemmex",], ms["wmma",]
    extra = [{"kernel": "cublas_gemmEx_fp16_out32", **rate(shape, gemmex_ms)},
             {"kernel": "wmma", "out": "fp32", **rate(shape, wmma_ms),
              "pct_of_best": 100 * best_ms / wmma_ms,
              "pct_of_gemmex_fp32_out": 100 * gemmex_ms / wmma_ms}]
    for i, entry in enumerate(ladder):
        step = our_row(*entry, A, B, shape, ms["ladder", i], best_ms, None)
        extra.append({**step, "pct_of_gemmex_fp32_out": 100 * gemmex_ms / step["ms"]})
    auto = next(r for r in our_rows if r["kernel"] == "hopper:auto")
    fastest = max((r for r in our_rows if "ms" in r), key=lambda r: r["tflops"])
    row = {"shape": list(shape), "baseline": best_name, "baseline_ms": best_ms,
           "libraries_missing": missing, "goal_pct": goal(shape), "libraries": lib_rows,
           "ours": our_rows, "other": extra, "auto_pct": auto["pct_of_best"],
           "fastest_ours": {k: fastest[k] for k in ("kernel", "options", "pct_of_best")}}
    print(f"{'x'.join(map(str, shape)):>17}  best {best_name:<28} {rate(shape, best_ms)['tflops']:7.1f}"
          f"  auto {auto['tflops']:7.1f} ({auto['pct_of_best']:5.1f}%, {auto.get('gbs', 0):6.0f} GB/s)"
          f"  fastest ours {fastest['pct_of_best']:5.1f}% {fastest['kernel']} {fastest['options']}"
          f"  wmma {100 * best_ms / wmma_ms:5.1f}%", flush=True)
    del A, B, out, c32, wmma, ours, ladder, launches
    cupy.get_default_memory_pool().free_all_blocks()
    return row, span


def host_overhead_us(dA, dB, calls=300):
    """Host microseconds per gl.gemm call on device arrays (a 256^3 GEMM, kernel shorter than
    the host's work), with the cached launch configuration and with the cache emptied before
    each call (as before the cache); and per bare configured launch."""
    cuda = gl.device.cuda()
    dC = cuda.device_array((dA.shape[0], dB.shape[1]), dtype=np.float32)
    one, zero = np.float32(1), np.float32(0)
    bare = gemm_launch.launch_configuration(
        "unrolled", tuple(sorted(gl.kernels.get("unrolled").resolve({}).items())),
        dA.shape[0], dB.shape[1], "gpu")

    def per_call(call):
        for _ in range(10):
            call()
        cuda.synchronize()
        t = time.perf_counter()
        for _ in range(calls):
            call()
        host = (time.perf_counter() - t) / calls * 1e6
        cuda.synchronize()
        return host

    def uncached():
        gemm_launch.clear_launch_cache()
        gl.gemm(dA, dB, kernel="unrolled")
    return {"gl.gemm (cached configuration)": per_call(lambda: gl.gemm(dA, dB, kernel="unrolled")),
            "gl.gemm (configuration made each call, as before)": per_call(uncached),
            "configured launch alone": per_call(lambda: bare(dA, dB, dC, dC, one, zero)),
            "output allocation alone": per_call(
                lambda: cuda.device_array((dA.shape[0], dB.shape[1]), dtype=np.float32))}


def time_unrolled(tiles, A, B):
    """``unrolled`` with ``tiles`` on square CuPy operands A, B: its median time (ms, flushed) and
    the relative error (norm) of its first 256 rows against float64."""
    import cupy
    cuda = gl.device.cuda()
    n = A.shape[0]
    dA, dB = cuda.as_cuda_array(A), cuda.as_cuda_array(B)
    dC = cuda.device_array((n, n), dtype=np.float32)
    launch = gemm_launch.launch_configuration("unrolled", tuple(sorted(tiles.items())), n, n, "gpu")
    one, zero = np.float32(1), np.float32(0)
    launch(dA, dB, dC, dC, one, zero)
    ref = cupy.asarray(A[:256], dtype=cupy.float64) @ cupy.asarray(B, dtype=cupy.float64)
    got = cupy.asarray(dC)[:256].astype(cupy.float64)
    err = float(cupy.linalg.norm(got - ref) / cupy.linalg.norm(ref))
    return ms_of(lambda: launch(dA, dB, dC, dC, one, zero), events="numba"), err


def fp32_libraries(n):
    """Square FP32 operands A, B (CuPy, seed 11) and the libraries timed on them (TF32 off):
    (A, B, library rows, (best name, best ms), libraries missing)."""
    import cupy
    rng = cupy.random.default_rng(11)
    A = rng.standard_normal((n, n), dtype=cupy.float32)
    B = rng.standard_normal((n, n), dtype=cupy.float32)
    out = cupy.empty((n, n), dtype=cupy.float32)
    return (A, B, *time_libraries(A, B, out, (n, n, n), None))


def fp32_size(n):
    """unrolled at n^3 against the best FP32 library (TF32 off), on the same inputs."""
    cuda = gl.device.cuda()
    shape = (n, n, n)
    A, B, lib_rows, (best_name, best_ms), missing = fp32_libraries(n)
    dA, dB = cuda.as_cuda_array(A), cuda.as_cuda_array(B)
    t, err = time_unrolled(gl.kernels.get("unrolled").resolve({}), A, B)
    through_gemm = ms_of(lambda: gl.gemm(dA, dB, kernel="unrolled"), events="numba", repeats=20)
    for r in lib_rows:
        r.update(pct_of_best=100 * best_ms / r["ms"])
    row = {"shape": list(shape), "baseline": best_name, "baseline_ms": best_ms,
           "libraries_missing": missing, "libraries": lib_rows, "goal_pct": FP32_GOALS[n],
           "unrolled": {**rate(shape, t), "rel_err_first_256_rows": err,
                        "pct_of_best": 100 * best_ms / t},
           "unrolled_through_gl_gemm": {**rate(shape, through_gemm),
                                        "pct_of_best": 100 * best_ms / through_gemm}}
    print(f"fp32 {n}^3: best {best_name} {rate(shape, best_ms)['tflops']:.1f} TFLOP/s; unrolled "
          f"{row['unrolled']['tflops']:.1f} ({row['unrolled']['pct_of_best']:.1f}%, goal "
          f"{FP32_GOALS[n]}%), through gl.gemm {row['unrolled_through_gl_gemm']['pct_of_best']:.1f}%;"
          f" rel err {err:.1e}", flush=True)
    return row


def part_fp32(record):
    import cupy
    rows = []
    for n in (2048, 4096, 8192):
        rows.append(fp32_size(n))
        cupy.get_default_memory_pool().free_all_blocks()
    record["fp32"] = rows
    small = cupy.random.default_rng(1).standard_normal((256, 256), dtype=cupy.float32)
    d = gl.device.cuda().as_cuda_array(small)
    record["gl_gemm_host_us_per_call_256"] = host_overhead_us(d, d)
    print("gl.gemm host us per call (256^3):", record["gl_gemm_host_us_per_call_256"], flush=True)


def fp8_configs(shape):
    """The FP8 rung's plans at one shape, BF16 out: auto and the alternatives it chose between,
    with the Tensor Core's own sums (fast) and with FP32-promoted ones; from 1024 rows up the
    wide tiles in clusters of two (fast); at decode shapes also the 64-row tiles (fast sums only:
    they are built without promotion)."""
    M, N, K = shape
    o, p = {"out": "bf16"}, {"out": "bf16", "promote": True}
    found = [("auto", o), ("persistent", o), ("persistent", {"epilogue": "staged", **o}),
             ("pingpong", o), ("persistent", {"tile_n": 128, **o}),
             ("auto", p), ("persistent", {"tile_n": 128, **p}), ("persistent", {"tile_n": 64, **p})]
    found += cluster_configs(M, **o)
    slices = hopper.ceil_div(K, hopper.FP8_BK)
    if M <= 128:
        found += [("persistent", {"tile_n": tile_n, "split_k": s, **mode})
                  for tile_n in (64, 128) for mode in (o, p) for s in (2, 4) if s <= slices]
    if few_tiles(M, N):                      # FP8 slices are twice as deep: half as many
        found += decode_configs(M, N, slices, DECODE_SPLIT_SLICES // 2, **o)
    return found


def fp8_corner_err(out, a, b_nk):
    """Relative error of a BF16 output's first 256 x 256 against float64 of the FP8 inputs."""
    import torch
    ref = a[:256].to(torch.float64) @ b_nk[:256].to(torch.float64).T
    got = torch.as_tensor(np.asarray(out[:256, :256], dtype=np.float64), device=ref.device)
    return float(torch.linalg.norm(got - ref) / torch.linalg.norm(ref))


def fp8_shape(shape):
    """Our FP8 rung and torch._scaled_mm (E4M3, unit per-tensor scales, BF16 out) on the same
    device bytes, and BF16 torch.matmul of the same values."""
    import cupy
    import torch
    M, N, K = shape
    a = torch.randn(M, K, device="cuda").to(torch.float8_e4m3fn)
    b_nk = torch.randn(N, K, device="cuda").to(torch.float8_e4m3fn)
    b = b_nk.t()                                                         # column-major B
    sa, sb = torch.tensor(1.0, device="cuda"), torch.tensor(1.0, device="cuda")
    a16, b16 = a.to(torch.bfloat16), b.to(torch.bfloat16)

    def scaled_mm(fast):
        return torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16,
                                use_fast_accum=fast)
    library = {}
    for mode, fast in (("fast", True), ("promoted", False)):
        library[mode] = {**rate(shape, ms_of(lambda fast=fast: scaled_mm(fast))),
                         "corner_rel_err": fp8_corner_err(scaled_mm(fast).float().cpu().numpy(),
                                                          a, b_nk)}
    scaled_corner = scaled_mm(False)[:256, :256].float().cpu().numpy()
    t16 = ms_of(lambda: torch.matmul(a16, b16))
    A = cupy.from_dlpack(a.view(torch.uint8))
    B = cupy.from_dlpack(b_nk.view(torch.uint8)).T                       # K x N, as gemm takes it
    ours = []
    for stage, options, problem in prepared(A, B, fp8_configs(shape), "e4m3", ours):
        problem.launch()
        out = hopper.result(problem, host=True).astype(np.float32)
        t = ms_of(problem.launch)
        mode = "promoted" if problem.plan.promote else "fast"
        ours.append({"kernel": f"hopper:{stage}", "options": options, "accumulation": mode,
                     "plan": problem.plan.describe(), **rate(shape, t),
                     "pct_of_scaled_mm": 100 * library[mode]["ms"] / t,
                     "corner_rel_err": fp8_corner_err(out, a, b_nk),
                     "max_abs_diff_vs_scaled_mm_corner": float(np.abs(
                         out[:256, :256] - scaled_corner).max())})
        del problem
    for mode in library:
        best = max((r for r in ours if r.get("accumulation") == mode), key=lambda r: r["tflops"])
        print(f"fp8 {'x'.join(map(str, shape))} {mode}: _scaled_mm "
              f"{library[mode]['tflops']:.0f}, ours best {best['tflops']:.0f} TFLOP/s "
              f"({best['pct_of_scaled_mm']:.0f}%, {best['plan']}); bf16 matmul "
              f"{rate(shape, t16)['tflops']:.0f}", flush=True)
    return {"shape": list(shape), "torch._scaled_mm_e4m3_bf16_out": library,
            "torch.matmul_bf16": rate(shape, t16), "ours": ours}


def part_fp8(record):
    record["fp8"] = [fp8_shape(shape) for shape in FP8_SHAPES]


def part_nvrtc(record, folder):
    """The log of the WMMA kernel's build per architecture: what the resource report parses."""
    found = {}
    with open(os.path.join(folder, "nvrtc_logs.txt"), "w") as f:
        for arch in ("sm_80", "sm_90", "sm_90a", "sm_100"):
            built = cudacompile.compile_source(kernel.kernel_source("fast"), arch, "probe.cu")
            f.write(f"===== {arch}: {len(built.log)} chars of log\n{built.log[:6000]}\n")
            found[arch] = {"log_chars": len(built.log), "kernels_reported": len(built.resources())}
    with open("/proc/self/maps", encoding="utf-8") as maps:
        loaded = sorted({line.split()[-1] for line in maps if "nvrtc" in line})
    record["nvrtc"] = {"version": cudacompile.version(), "builds": found, "libraries": loaded,
                       "environment": {k: v for k, v in os.environ.items()
                                       if "CUDA" in k or "NVRTC" in k or "PTXAS" in k}}
    print("nvrtc:", record["nvrtc"], flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--parts", nargs="+", default=["fp16", "fp32", "fp8", "nvrtc"])
    args = ap.parse_args()
    import cupy
    record = {"machine": measure.machine(gpu="numba", libraries=libraries.versions(),
                                         compiler=cudacompile.available()[1]),
              "timer": measure.FLUSHED_METHOD, "repeats": REPEATS,
              "baselines": "fastest of " + ", ".join(libraries.LIBRARIES) + " (those installed)"}
    record["copy_gbs"] = copy_gbs()
    print("machine:", {k: record["machine"].get(k) for k in ("gpu", "driver", "cuda_runtime")},
          "copy GB/s", round(record["copy_gbs"]), flush=True)
    parts = {"nvrtc": lambda r: part_nvrtc(r, os.path.dirname(os.path.abspath(args.out))),
             "fp16": part_fp16, "fp32": part_fp32, "fp8": part_fp8}
    for name in args.parts:
        t = time.time()
        try:
            parts[name](record)
        except Exception as exc:   # noqa: BLE001 - keep the other parts' figures
            record.setdefault("errors", {})[name] = f"{type(exc).__name__}: {exc}"
            print(f"part {name} failed: {type(exc).__name__}: {exc}", flush=True)
        record.setdefault("seconds", {})[name] = time.time() - t
        with open(args.out, "w") as f:
            json.dump(record, f, indent=1, default=str)
        cupy.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    main()
