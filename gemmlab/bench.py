"""Benchmark harness of the kernel ladder: validate, time, compare with cuBLAS, place on the roofline.

For each shape every kernel is first checked against a float64 reference (relative Frobenius
error), then warmed up and timed by the fair timer, ``gl.measure.flushed_ms``: ``repeats``
launches, each between its own two CUDA events with an L2 flush queued before it (so Python's
launch overhead hides behind the flush and every launch starts with a cold L2), and the median
is reported. The SGEMM baseline, kernel "cublas", is the fastest of the cuBLAS front-ends of
``gl.tensorcore.libraries`` (CuPy, cuBLASLt autotuned through nvmath-python, PyTorch; TF32 off)
timed in the same process; its row names which one (``library``). Registers, shared and local
memory come from the compiled kernels, and blocks per SM from the driver's occupancy calculator
for this GPU.

On Numba's simulator the same code runs at tiny sizes to test the harness; its times are Python
wall-clock, NOT GPU times, and resources and peaks are reported as unavailable (None).

    results = gl.bench.run(["naive", "tiled", "outer:BM=64,BN=64"], [1024, 2048])
    print(gl.bench.table(results))
"""
import json
import os
import statistics
import sys

import numpy as np

from . import device, measure
from . import kernels as ladder

SIM_TIMING = "simulator wall-clock (NOT GPU time)"
GPU_TIMING = measure.FLUSHED_METHOD


def parse_kernel(spec):
    """'outer:BM=64,BN=64' -> ('outer', {'BM': 64, 'BN': 64}); 'tiled' -> ('tiled', {});
    'hopper:stage=ws' -> ('hopper', {'stage': 'ws'}) (the Hopper ladder's steps are named)."""
    name, _, rest = spec.partition(":")
    if name == "hopper":
        from .tensorcore import hopper
        key, _, stage = rest.partition("=")
        if rest and key.strip() != "stage":
            raise ValueError(f"kernel spec {spec!r}: expected hopper or hopper:stage=NAME")
        stage = stage.strip() or hopper.DEFAULT_STAGE
        return name, {"stage": stage if stage == hopper.AUTO else hopper.get_stage(stage).name}
    tiles = {}
    for item in filter(None, rest.split(",")):
        key, eq, value = item.partition("=")
        if not eq or not value.strip().lstrip("-").isdigit():
            raise ValueError(f"kernel spec {spec!r}: expected name:KEY=INT,KEY=INT, got {item!r}")
        tiles[key.strip()] = int(value)
    if name != "wmma":                 # the Tensor Core GEMM (lesson 12) is not a numba rung
        ladder.get(name)
    return name, tiles


def parse_shape(text):
    """'1024x512x256' -> (1024, 512, 256) as (M, N, K)."""
    parts = text.lower().split("x")
    if len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise ValueError(f"shape {text!r}: expected MxNxK with positive integers, e.g. 4096x1024x512")
    return tuple(int(p) for p in parts)


def cupy_or_none():
    """CuPy with TF32 off (it reads CUPY_TF32 at import), or None when it cannot be used."""
    if device.backend() == "sim":
        return None
    os.environ["CUPY_TF32"] = "0"
    try:
        import cupy
    except ImportError:
        return None
    return cupy


def cublas_unavailable_reason():
    if device.backend() == "sim":
        return "simulator: no cuBLAS"
    return None if cupy_or_none() is not None else ("CuPy is not installed (pip install 'gemmlab[cuda12]' or "
                                               "'[cuda13]' to match the driver: gemmlab doctor)")


def _progress(done, total, label, enabled):
    if not enabled:
        return
    width = 24
    filled = width * done // total
    end = "\n" if done == total else ""
    print(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {label:<40}", end=end,
          file=sys.stderr, flush=True)


def _time_sim(launch, repeats):
    """Median milliseconds of ``launch()`` on the host clock: the simulator has no GPU time."""
    return statistics.median(measure.wall_seconds(launch, repeats)) * 1e3


def time_on_gpu(launch, repeats, warmup, events):
    """Median milliseconds per launch by the fair timer (``gl.measure.flushed_ms``: an L2 flush
    queued before each launch hides the host's launch cost and starts each launch cold)."""
    return statistics.median(measure.flushed_ms(launch, repeats, warmup, events=events))


def _resources(kern):
    """(registers per thread, shared bytes per block, local bytes per thread), or Nones on the
    simulator, which compiles nothing."""
    if device.backend() == "sim":
        return None, None, None

    def one(value):
        return next(iter(value.values())) if isinstance(value, dict) else value
    return (one(kern.get_regs_per_thread()), one(kern.get_shared_mem_per_block()),
            one(kern.get_local_mem_per_thread()))


def driver_blocks_per_sm(kern, threads, dynamic_shared=0):
    """How many blocks of the compiled numba kernel ``kern`` (launched with ``threads`` per block)
    the CUDA driver's occupancy calculator (``cuOccupancyMaxActiveBlocksPerMultiprocessor``) puts
    on one SM of this GPU; None on the simulator, which has no SMs."""
    if device.backend() == "sim":
        return None
    compiled = next(iter(kern.overloads.values()))
    function = compiled._codelibrary.get_cufunc()       # what numba's own get_regs_per_thread reads
    blocks = device.cuda().current_context().get_active_blocks_per_multiprocessor(
        function, threads, dynamic_shared)
    return int(blocks[-1] if isinstance(blocks, tuple) else blocks)


def peak_fp32_tflops():
    """FP32 FMA peak from the device's SM count and clock (None on the simulator)."""
    if device.backend() == "sim":
        return None
    return device.spec().peak_fp32 / 1e12


def copy_bandwidth_gbs(nbytes=1 << 28, repeats=10):
    """Measured device-to-device copy bandwidth (read + write bytes), GB/s; None on the simulator."""
    if device.backend() == "sim":
        return None
    cuda = device.cuda()
    src = cuda.device_array(nbytes // 4, dtype=np.float32)
    dst = cuda.device_array(nbytes // 4, dtype=np.float32)
    ms = time_on_gpu(lambda: dst.copy_to_device(src), repeats, 2, "numba")
    return 2 * nbytes / (ms * 1e-3) / 1e9


def machine():
    """What the numbers were measured on (``gl.measure.machine``), with the peaks and baseline."""
    return measure.machine(
        timing=SIM_TIMING if device.backend() == "sim" else GPU_TIMING,
        peak_fp32_tflops=peak_fp32_tflops(),
        copy_bandwidth_gbs=copy_bandwidth_gbs(),
        cublas="the fastest of cupy.matmul (CUPY_TF32=0), cuBLASLt autotuned (nvmath) and "
               "torch.matmul (TF32 off), FP32 SGEMM; each row names it",
        cublas_unavailable=cublas_unavailable_reason())


def gemm_inputs(M, N, K, seed):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((M, K), dtype=np.float32)
    B = rng.standard_normal((K, N), dtype=np.float32)
    return A, B


def float64_reference(A, B):
    """A B in float64, on the GPU through CuPy when it is there (it is much faster)."""
    cp = cupy_or_none()
    if cp is not None:
        return cp.asnumpy(cp.asarray(A, dtype=cp.float64) @ cp.asarray(B, dtype=cp.float64))
    return A.astype(np.float64) @ B.astype(np.float64)


def relative_error(C, ref):
    return float(np.linalg.norm(C.astype(np.float64) - ref) / np.linalg.norm(ref))


def _roofline(row, flops, nbytes, peak, bandwidth):
    """Where a kernel sits: its model intensity, the attainable TFLOP/s there, what bounds it."""
    row["intensity"] = flops / nbytes if nbytes else None
    if peak is None or bandwidth is None or nbytes is None:
        row.update(roofline_tflops=None, bound=None, pct_of_roofline=None)
        return
    attainable = min(peak, row["intensity"] * bandwidth / 1e3)
    row.update(roofline_tflops=attainable,
               bound="memory" if attainable < peak else "compute",
               pct_of_roofline=100 * row["tflops"] / attainable)


def time_cublas(A, B, ref, repeats, warmup):
    """The SGEMM baseline: every library of ``tensorcore.libraries`` that runs FP32 here (cuBLAS
    through CuPy, cuBLASLt autotuned, PyTorch; TF32 off), each timed by the fair timer, and the
    fastest taken. Returns (ms, relative error of the fastest's output, what the record names)."""
    from .tensorcore import libraries
    cp = cupy_or_none()
    dA, dB = cp.asarray(A), cp.asarray(B)
    dC = cp.empty((A.shape[0], B.shape[1]), dtype=cp.float32)
    found, missing = libraries.launchers(dA, dB, dC)
    timed = {name: time_on_gpu(launch, repeats, warmup, "cupy") for name, launch in found.items()}
    name, ms = libraries.best(timed)
    dC.fill(cp.nan)
    found[name]()
    named = dict(library=name, libraries_ms=timed, libraries_missing=missing)
    return ms, relative_error(cp.asnumpy(dC), ref), named


def time_course_kernel(spec, dA, dB, dC, ref, repeats, warmup):
    name, tiles = parse_kernel(spec)
    rung = ladder.get(name)
    tiles = rung.resolve(tiles)
    plan = rung.plan(**tiles)
    kern = rung.kernel(**tiles)
    M, N = dC.shape
    launch_cfg = kern[plan.grid(M, N), plan.block]
    one, zero = np.float32(1), np.float32(0)

    def launch():
        launch_cfg(dA, dB, dC, dC, one, zero)
    launch()
    rel_err = relative_error(dC.copy_to_host(), ref)
    if device.backend() == "sim":
        ms = _time_sim(launch, repeats)
    else:
        ms = time_on_gpu(launch, repeats, warmup, "numba")
    regs, smem, local = _resources(kern)
    return dict(kernel=name, tiles=tiles, ms=ms, rel_err=rel_err, regs=regs, smem_bytes=smem,
                local_bytes=local, blocks_per_sm=driver_blocks_per_sm(kern, plan.threads),
                model_bytes=plan.dram_bytes(*dC.shape, dA.shape[1]))


def _tensorcore_row(kernel, tiles, A16, B16, gpu_launch, attributes, repeats, warmup):
    """Time a Tensor Core kernel on FP16 copies of A and B against cuBLAS FP16 -> FP32 on the
    same inputs (its fair baseline, not SGEMM), checked against float64 on those inputs. On the
    simulator: the NumPy emulation of the same arithmetic, wall-clock."""
    from . import tensorcore
    from .tensorcore import timing
    ref16 = A16.astype(np.float64) @ B16.astype(np.float64)
    if device.backend() == "sim":
        out = tensorcore.emulate(A16, B16)
        ms = _time_sim(lambda: tensorcore.emulate(A16, B16), repeats)
        regs = smem = local = None
        baseline_ms = None
    else:
        cp = cupy_or_none()
        launch, result = gpu_launch()
        launch()
        out = cp.asnumpy(result)
        ms = time_on_gpu(launch, repeats, warmup, "cupy")
        attrs = attributes()
        regs, smem, local = attrs["regs"], attrs["smem_bytes"], attrs["local_bytes"]
        dC = cp.empty(out.shape, dtype=cp.float32)
        fp16 = timing.cublas_launcher("cublas_fp16", cp.asarray(A16), cp.asarray(B16), dC)
        baseline_ms = time_on_gpu(fp16, repeats, warmup, "cupy")
    return dict(kernel=kernel, tiles=tiles, ms=ms, rel_err=relative_error(out, ref16), regs=regs,
                smem_bytes=smem, local_bytes=local, blocks_per_sm=None, model_bytes=None,
                baseline_ms=baseline_ms)


def _bench_wmma(A, B, repeats, warmup):
    """The WMMA kernel of lesson 12 (see :func:`_tensorcore_row`)."""
    from . import tensorcore
    A16, B16 = A.astype(np.float16), B.astype(np.float16)

    def gpu_launch():
        problem = tensorcore.kernel.prepare(A16, B16)
        return problem.launch, problem.C_out
    return _tensorcore_row("wmma", {"tiling": tensorcore.DEFAULT.name}, A16, B16, gpu_launch,
                           tensorcore.kernel.kernel_attributes, repeats, warmup)


def _bench_hopper(stage, A, B, repeats, warmup):
    """One step of the Hopper ladder (lesson 12, part 2; see :func:`_tensorcore_row`)."""
    from .tensorcore import hopper
    A16, B16 = A.astype(np.float16), B.astype(np.float16)
    if device.backend() == "gpu":
        ok, reason = hopper.available()
        if not ok:
            raise RuntimeError(f"hopper:stage={stage} cannot run here: {reason}")

    prepared = []

    def gpu_launch():
        prepared.append(hopper.prepare(A16, B16, stage=stage))
        return prepared[0].launch, prepared[0].C_out
    return _tensorcore_row(f"hopper:{stage}", {"stage": stage}, A16, B16, gpu_launch,
                           lambda: hopper.attributes(prepared[0].plan), repeats, warmup)


def run(kernels=None, sizes=None, shapes=(), repeats=None, warmup=3, progress=True, seed=0,
        peak_tflops=None, bandwidth_gbs=None):
    """Validate and time ``kernels`` (names or 'name:KEY=INT,...' specs; default all rungs) on
    square ``sizes`` and (M, N, K) ``shapes``; one result dict per (kernel, shape), cuBLAS
    included as kernel "cublas" (the fastest SGEMM library) when CuPy is there. ``repeats``
    defaults to 20 on a GPU, 3 on the simulator. Peak and bandwidth default to the measured ones
    (see :func:`machine`)."""
    specs = list(kernels or ladder.names())
    for spec in specs:
        parse_kernel(spec)
    all_shapes = [(n, n, n) for n in (sizes if sizes is not None else
                                      device.sizes()["bench_sizes"])] + list(shapes)
    sim = device.backend() == "sim"
    repeats = repeats or (3 if sim else 20)
    if repeats < 1:
        raise ValueError(f"repeats must be >= 1, got {repeats}")
    peak = peak_tflops if peak_tflops is not None else peak_fp32_tflops()
    bandwidth = bandwidth_gbs if bandwidth_gbs is not None else copy_bandwidth_gbs()
    use_cublas = cupy_or_none() is not None
    cuda = device.cuda()
    total = len(all_shapes) * (len(specs) + use_cublas)
    done, results = 0, []
    for M, N, K in all_shapes:
        A, B = gemm_inputs(M, N, K, seed)
        ref = float64_reference(A, B)
        dA, dB = cuda.to_device(A), cuda.to_device(B)
        dC = cuda.device_array((M, N), dtype=np.float32)
        flops = 2.0 * M * N * K
        cublas_ms = None
        rows = []
        if use_cublas:
            _progress(done, total, f"cublas {M}x{N}x{K}", progress)
            cublas_ms, err, named = time_cublas(A, B, ref, repeats, warmup)
            rows.append(dict(kernel="cublas", tiles={}, ms=cublas_ms, rel_err=err, regs=None,
                             smem_bytes=None, local_bytes=None, blocks_per_sm=None,
                             model_bytes=None, **named))
            done += 1
        for spec in specs:
            _progress(done, total, f"{spec} {M}x{N}x{K}", progress)
            name, options = parse_kernel(spec)
            if name == "wmma":
                rows.append(_bench_wmma(A, B, repeats, warmup))
            elif name == "hopper":
                rows.append(_bench_hopper(options["stage"], A, B, repeats, warmup))
            else:
                rows.append(time_course_kernel(spec, dA, dB, dC, ref, repeats, warmup))
            done += 1
        for row in rows:
            row.update(M=M, N=N, K=K, timing=SIM_TIMING if sim else GPU_TIMING)
            row["tflops"] = flops / (row["ms"] * 1e-3) / 1e12
            # Tensor Core rows bring their own baseline (cuBLAS FP16 -> FP32); the rest: SGEMM
            baseline = row.pop("baseline_ms", None) or cublas_ms
            row["pct_of_cublas"] = 100 * baseline / row["ms"] if baseline else None
            _roofline(row, flops, row.pop("model_bytes"), peak, bandwidth)
        results.extend(rows)
    _progress(total, total, "done", progress)
    return results


def _fmt(value, spec):
    """``format(value, spec)``, or a dash of the same width for a value that is unavailable."""
    return format("-", spec.rstrip("dfe").split(".")[0]) if value is None else format(value, spec)


def table(results, machine_info=None):
    """The results as a fixed-width text table, with the caveats that apply written under it."""
    head = (f"{'kernel':<18} {'M x N x K':>16} {'ms':>9} {'TFLOP/s':>8} {'%cuBLAS':>8} "
            f"{'rel.err':>8} {'regs':>5} {'smem B':>7} {'local B':>7} {'roof %':>6} {'bound':>7}")
    lines = [head, "-" * len(head)]
    for r in results:
        shape = f"{r['M']}x{r['N']}x{r['K']}"
        lines.append(
            f"{r['kernel']:<18} {shape:>16} "
            f"{r['ms']:>9.3f} {r['tflops']:>8.3g} {_fmt(r['pct_of_cublas'], '>8.1f')} "
            f"{r['rel_err']:>8.1e} {_fmt(r['regs'], '>5d')} {_fmt(r['smem_bytes'], '>7d')} "
            f"{_fmt(r['local_bytes'], '>7d')} {_fmt(r['pct_of_roofline'], '>6.1f')} "
            f"{r['bound'] or '-':>7}")
    notes = []
    if results and results[0]["timing"] == SIM_TIMING:
        notes.append("Times are the simulator's Python wall-clock, NOT GPU times; registers, "
                     "shared/local memory and the roofline are unavailable on the simulator.")
    if any(r["kernel"] == "wmma" or r["kernel"].startswith("hopper") for r in results):
        notes.append("wmma and hopper run on FP16 copies of the inputs (FP32 accumulation); "
                     "their %cuBLAS is against cuBLAS FP16 with FP32 compute timed in the same "
                     "run, not SGEMM.")
    picked = [f"{r['M']}x{r['N']}x{r['K']} {r['library']}" for r in results if r.get("library")]
    if picked:
        notes.append("cublas is the fastest SGEMM library timed per shape: " + ", ".join(picked)
                     + ".")
    reason = cublas_unavailable_reason()
    if reason and not any(r["kernel"] == "cublas" for r in results):
        notes.append(f"%cuBLAS is empty: {reason}.")
    if machine_info and machine_info.get("peak_fp32_tflops"):
        notes.append(f"Roofline: FP32 peak {machine_info['peak_fp32_tflops']:.1f} TFLOP/s, "
                     f"measured copy bandwidth {machine_info['copy_bandwidth_gbs']:.0f} GB/s; "
                     f"intensity from each kernel's ideal tiling traffic model.")
    return "\n".join(lines + notes)


def main(args):
    """``gemmlab bench`` (GPU kernels): run, print the table, write JSON to ``args.out``."""
    specs = args.kernels or None
    shapes = [parse_shape(s) for s in (args.shapes or [])]
    sizes = args.sizes if args.sizes else (None if not shapes else [])
    info = machine()
    results = run(specs, sizes, shapes, repeats=args.repeats, progress=not args.quiet,
                  peak_tflops=info["peak_fp32_tflops"], bandwidth_gbs=info["copy_bandwidth_gbs"])
    print(table(results, info))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump({"machine": info, "results": results}, f, indent=1)
        print(f"wrote {args.out}")
    return 0
