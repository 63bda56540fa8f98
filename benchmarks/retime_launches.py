"""The GPU side of retime.py: each figure's launch rebuilt from its spec as the record's script
made it (same inputs, shapes, dtypes, plan), timed by Triton's ``do_bench``; the machine it ran on.

Inputs are made as library_gpu.py, gemm_host.py and attention_gpu.py made them (the same helpers
where those scripts have one). A launch that cannot be rebuilt as recorded (a library missing, a
Hopper plan that the same stage and options no longer give, a call the package no longer has) is
reported with its reason instead of a time; nothing else is timed in its place.
"""
import datetime
import os
import platform
import shutil
import statistics
import subprocess
import time

os.environ.setdefault("GEMMLAB_BACKEND", "gpu")
os.environ["CUPY_TF32"] = "0"          # read when CuPy is imported: SGEMM in FP32, as recorded

HOST_WARMUP, HOST_BLOCK = 20, 300      # host costs: warm-up calls, then blocks of this many calls
SMI_FIELDS = {"driver_version": "driver", "clocks.max.sm": "max_sm_mhz",
              "power.limit": "power_limit_w"}


class NotAsRecorded(RuntimeError):
    """The launch the record timed cannot be made again."""


def _fp16_inputs(spec):
    import cupy
    from hopper_gpu import device_inputs
    M, N, K = spec["shape"]
    A, B = device_inputs(M, N, K, "fp16", seed=7)
    return {"A": A, "B": B, "out": cupy.empty((M, N), dtype=cupy.float16),
            "c32": cupy.empty((M, N), dtype=cupy.float32)}


def _fp32_inputs(spec):
    import cupy
    import numpy as np

    import gemmlab as gl
    n = spec["shape"][0]
    rng = cupy.random.default_rng(11)
    A = rng.standard_normal((n, n), dtype=cupy.float32)
    B = rng.standard_normal((n, n), dtype=cupy.float32)
    cuda = gl.device.cuda()
    return {"A": A, "B": B, "out": cupy.empty((n, n), dtype=cupy.float32),
            "dA": cuda.as_cuda_array(A), "dB": cuda.as_cuda_array(B),
            "dC": cuda.device_array((n, n), dtype=np.float32)}


def _fp8_inputs(spec):
    import cupy
    import torch
    M, N, K = spec["shape"]
    a = torch.randn(M, K, device="cuda").to(torch.float8_e4m3fn)
    b_nk = torch.randn(N, K, device="cuda").to(torch.float8_e4m3fn)
    b = b_nk.t()                                                         # column-major B
    return {"a": a, "b": b, "one": torch.tensor(1.0, device="cuda"),
            "a16": a.to(torch.bfloat16), "b16": b.to(torch.bfloat16),
            "A": cupy.from_dlpack(a.view(torch.uint8)),
            "B": cupy.from_dlpack(b_nk.view(torch.uint8)).T}            # K x N, as gemm takes it


def _host_inputs(spec):
    import cupy
    import numpy as np

    import gemmlab as gl
    n = spec["shape"][0]
    A = cupy.random.default_rng(1).standard_normal((n, n), dtype=cupy.float32)
    cuda = gl.device.cuda()
    return {"A": A, "dA": cuda.as_cuda_array(A), "dC": cuda.device_array((n, n), dtype=np.float32),
            "cuda": cuda}


def _copy_inputs(spec):
    import cupy
    src = cupy.ones(spec["bytes"] // 2 // 4, dtype=cupy.float32)
    return {"src": src, "dst": cupy.empty_like(src)}


def _attention_inputs(spec):
    import cupy
    import torch
    from attention_gpu import tensors
    B, H, N, d = (spec[k] for k in ("B", "H", "N", "d"))
    Q, K, V = (t.reshape(B, H, N, d) for t in tensors(torch, B * H, N, d, spec["fmt"], seed=1))
    return {"Q": Q, "K": K, "V": V, "cupy": cupy, "torch": torch}


INPUTS = {"fp16": _fp16_inputs, "fp32": _fp32_inputs, "fp8": _fp8_inputs, "host": _host_inputs,
          "copy": _copy_inputs, "attention": _attention_inputs}


def _library(spec, x):
    from gemmlab.tensorcore import libraries
    name = spec["library"]
    found, missing = libraries.launchers(x["A"], x["B"], x["out"], names=[name])
    if name in missing:
        raise NotAsRecorded(f"{name}: {missing[name]}")
    return found[name]


def _hopper(spec, x):
    from gemmlab.tensorcore import hopper
    problem = hopper.prepare(x["A"], x["B"], stage=spec["stage"], bits_as=spec["fmt"],
                             **spec["options"])
    now = problem.plan.describe()
    if now != spec["plan"]:
        raise NotAsRecorded(f"stage {spec['stage']} with {spec['options']} now plans {now!r}; "
                            f"the record timed {spec['plan']!r}")
    return problem.launch


def _gemmex(spec, x):
    from gemmlab.tensorcore import timing
    return timing.cublas_launcher("cublas_fp16", x["A"], x["B"], x["c32"])


def _wmma(spec, x):
    from gemmlab.tensorcore import kernel
    return kernel.prepare(x["A"], x["B"], bits_as="fp16").launch


def _scaled_mm(spec, x):
    import torch
    return lambda: torch._scaled_mm(x["a"], x["b"], scale_a=x["one"], scale_b=x["one"],
                                    out_dtype=torch.bfloat16, use_fast_accum=spec["fast"])


def _bf16_matmul(spec, x):
    import torch
    return lambda: torch.matmul(x["a16"], x["b16"])


def _configured(n, A, B, C):
    """numba's configured launch of ``unrolled`` (default tiles) for n x n, on device arrays."""
    import numpy as np

    import gemmlab as gl
    from gemmlab.kernels import launch as gemm_launch
    tiles = tuple(sorted(gl.kernels.get("unrolled").resolve({}).items()))
    configured = gemm_launch.launch_configuration("unrolled", tiles, n, n, "gpu")
    one, zero = np.float32(1), np.float32(0)
    return lambda: configured(A, B, C, C, one, zero)


def _unrolled(spec, x):
    return _configured(spec["shape"][0], x["dA"], x["dB"], x["dC"])


def _gl_gemm(spec, x):
    import gemmlab as gl
    A, B = (x["A"], x["B"]) if spec["arrays"] == "cupy" else (x["dA"], x["dB"])
    return lambda: gl.gemm(A, B, kernel="unrolled")


def _host(spec, x):
    """A host-cost call of gemm_host.py / library_gpu.py on the 256 x 256 operand (A @ A)."""
    import numpy as np

    import gemmlab as gl
    from gemmlab.kernels import launch as gemm_launch
    call, n = spec["call"], spec["shape"][0]
    A = x["A"] if spec.get("arrays") == "cupy" else x["dA"]
    if call == "gl.gemm":
        return lambda: gl.gemm(A, A, kernel="unrolled")
    if call == "gl.gemm uncached":
        def uncached():
            gemm_launch.clear_launch_cache()
            gl.gemm(A, A, kernel="unrolled")
        return uncached
    if call == "configured launch":
        return _configured(n, x["dA"], x["dA"], x["dC"])
    if call == "output allocation":
        return lambda: x["cuda"].device_array((n, n), dtype=np.float32)
    if call == "cupy.matmul":
        return lambda: x["A"] @ x["A"]
    raise NotAsRecorded(f"no host call {call!r} known")


def _copy(spec, x):
    import cupy
    return lambda: cupy.copyto(x["dst"], x["src"])


def _sdpa(spec, x):
    from attention_gpu import sdpa_backends
    from torch.nn.attention import sdpa_kernel
    backends = sdpa_backends(x["torch"])
    if spec["backend"] not in backends:
        raise NotAsRecorded(f"this torch has no SDPA backend {spec['backend']!r}")
    backend, sdpa = backends[spec["backend"]], x["torch"].nn.functional.scaled_dot_product_attention

    def launch():
        with sdpa_kernel(backend):
            sdpa(x["Q"], x["K"], x["V"], is_causal=spec["causal"])
    return launch


def _flash(spec, x):
    from attention_gpu import ours
    q, k, v = (t.reshape(-1, spec["N"], spec["d"]) for t in (x["Q"], x["K"], x["V"]))
    return lambda: ours(x["cupy"], x["torch"], q, k, v, spec["fmt"], spec["causal"], spec["kernel"])


BUILDERS = {"library": _library, "hopper": _hopper, "gemmex": _gemmex, "wmma": _wmma,
            "scaled_mm": _scaled_mm, "bf16_matmul": _bf16_matmul, "unrolled": _unrolled,
            "gl.gemm": _gl_gemm, "host": _host, "copy": _copy, "sdpa": _sdpa, "flash": _flash}


def host_ms(call, blocks):
    """Host milliseconds a call: the median of ``blocks`` blocks of HOST_BLOCK calls on the host
    clock, each block after a synchronisation and synchronised at its end (not timed)."""
    import cupy
    for _ in range(HOST_WARMUP):
        call()
    per_call = []
    for _ in range(blocks):
        cupy.cuda.Device().synchronize()
        start = time.perf_counter()
        for _ in range(HOST_BLOCK):
            call()
        per_call.append((time.perf_counter() - start) / HOST_BLOCK * 1000)
        cupy.cuda.Device().synchronize()
    return statistics.median(per_call)


def bench_ms(launches, rounds, rep_ms):
    """Each launch timed by do_bench (its default warm-up, median mode) in ``rounds`` round-robin
    rounds: {name: the median of its rounds}."""
    from triton.testing import do_bench
    samples = {name: [] for name in launches}
    for _ in range(rounds):
        for name, launch in launches.items():
            samples[name].append(do_bench(launch, rep=rep_ms[name], return_mode="median"))
    return {name: statistics.median(s) for name, s in samples.items()}


def build_launches(figures, x, failures):
    """{name: launch} of the figures whose launch could be made (and ran once); the others go
    into ``failures`` with the reason."""
    launches = {}
    for f in figures:
        if f.launch["kind"] not in BUILDERS:
            failures[f.name] = f"no launch known for kind {f.launch['kind']!r}"
            continue
        try:
            launch = BUILDERS[f.launch["kind"]](f.launch, x)
            launch()                   # compilation, autotuning, the first call's set-up
        except Exception as exc:       # noqa: BLE001 - reported as this figure's result
            failures[f.name] = f"{type(exc).__name__}: {str(exc)[:300]}"
        else:
            launches[f.name] = launch
    return launches


def free_memory():
    """Give a group's device memory back (CuPy's pool, torch's cache) before the next group's."""
    import cupy
    import torch
    cupy.get_default_memory_pool().free_all_blocks()
    torch.cuda.empty_cache()


def retime(figures, rounds, rep_ms):
    """({name: ms}, {name: why not rebuilt}, {group: SM clock while it was timed}) of the
    figures, group by group, in the record's order."""
    import gpu_clocks
    groups = {}
    for f in figures:
        groups.setdefault(f.group, []).append(f)
    retimed, failures, spans = {}, {}, {}
    with gpu_clocks.Sampler() as sampler:
        for group, members in groups.items():
            try:
                x = INPUTS[members[0].launch["inputs"]](members[0].launch)
            except Exception as exc:   # noqa: BLE001 - every figure of the group says why
                failures.update({f.name: f"inputs: {type(exc).__name__}: {str(exc)[:300]}"
                                 for f in members})
                continue
            launches = build_launches(members, x, failures)
            start = time.time()
            if members[0].unit == "us":
                retimed.update({name: host_ms(launch, rounds) for name, launch in launches.items()})
            else:
                retimed.update(bench_ms(launches, rounds, rep_ms))
            spans[group] = (start, time.time())
            print(f"{group}: {len(launches)} re-timed, {len(members) - len(launches)} not rebuilt",
                  flush=True)
            del x, launches
            free_memory()
    return retimed, failures, {group: sampler.during(span) for group, span in spans.items()}


def current_gpu():
    """The name the driver gives the GPU in hand (as the records' machine.gpu)."""
    import torch
    return torch.cuda.get_device_name(0)


def _smi():
    """Driver version, max SM clock and power limit from nvidia-smi (or why they are missing)."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return {"driver": "unknown (no nvidia-smi)"}
    done = subprocess.run([smi, f"--query-gpu={','.join(SMI_FIELDS)}",
                           "--format=csv,noheader,nounits", "-i", "0"],
                          capture_output=True, text=True, timeout=60)
    values = [v.strip() for v in done.stdout.strip().split(",")]
    if done.returncode != 0 or len(values) != len(SMI_FIELDS):
        return {"driver": f"unknown (nvidia-smi: {(done.stderr or done.stdout).strip()[:200]})"}
    return dict(zip(SMI_FIELDS.values(), values, strict=True))


def machine():
    """What the re-timing ran on: date, GPU, driver, clocks limit, CUDA and package versions."""
    import cupy
    import torch

    import gemmlab as gl
    from gemmlab.tensorcore import libraries
    props = torch.cuda.get_device_properties(0)
    return {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "gpu": props.name, "compute_capability": f"{props.major}.{props.minor}",
            "sm_count": props.multi_processor_count, **_smi(),
            "cuda_runtime": cupy.cuda.runtime.runtimeGetVersion(),
            "cuda_driver_api": cupy.cuda.runtime.driverGetVersion(), "os": platform.platform(),
            "versions": {**gl.device.versions(), **libraries.versions()}}
