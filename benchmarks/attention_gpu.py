"""Lesson 16 on a GPU: the course's fused attention kernels (gemmlab/tensorcore/flash_attention.cu,
mma.sync, 4 or 8 warps; on sm_90 also flash_hopper.cu, wgmma with TMA and warp specialisation,
without and with the consumers' ping-pong)
checked against float64 and timed with the fair timer (gl.measure.flushed_ms: an L2 flush before
each launch) beside torch's scaled_dot_product_attention, each of its backends timed alone and
the fastest named.

    python benchmarks/attention_gpu.py --out attention_gpu.json [--quick] [--sanitize]

--sanitize runs only small launches of every configuration with their checks (for
compute-sanitizer's memcheck and racecheck, which benchmarks/gpu_attention.sh runs it under).
"""
import argparse
import json
import math
import sys
import time

import numpy as np

import gemmlab as gl
from gemmlab.tensorcore import flash, flash_hopper

DTYPES = {"fp16": "float16", "bf16": "bfloat16"}
HOPPER_KERNELS = ("wgmma", "wgmma_pingpong")
TOLERANCE = {"fp16": 4e-3, "bf16": 3e-2}       # max |O - O_64| for O of magnitude <= 1


def tensors(torch, heads, N, d, fmt, seed=0):
    g = torch.Generator(device="cuda").manual_seed(seed)
    dtype = getattr(torch, DTYPES[fmt])
    return [torch.randn(heads, N, d, device="cuda", generator=g).to(dtype) for _ in range(3)]


def as_cupy(cupy, t, fmt):
    """A CuPy view of a torch tensor (bf16 as its 16-bit pattern, which the kernel reads)."""
    import torch
    return cupy.from_dlpack(t.view(torch.int16) if fmt == "bf16" else t)


def ours(cupy, torch, Q, K, V, fmt, causal, kernel):
    """O from one of our kernels: ``kernel`` 4 or 8 (mma.sync, that many warps), "wgmma" or
    "wgmma_pingpong"."""
    q, k, v = (as_cupy(cupy, t, fmt) for t in (Q, K, V))
    if fmt == "bf16":
        q, k, v = (a.view(cupy.uint16) for a in (q, k, v))
    if kernel in HOPPER_KERNELS:
        out = flash_hopper.attention(q, k, v, causal=causal, pingpong=kernel == "wgmma_pingpong")
    else:
        out = flash.attention(q, k, v, causal=causal, warps=kernel)
    if fmt == "bf16":
        return torch.from_dlpack(out.view(cupy.int16)).view(torch.bfloat16)
    return torch.from_dlpack(out)


def reference(torch, Q, K, V, causal):
    q, k, v = (t.double() for t in (Q, K, V))
    s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if causal:
        n = s.shape[-1]
        s = s.masked_fill(torch.ones(n, n, device=s.device, dtype=torch.bool).triu(1), -math.inf)
    return torch.softmax(s, dim=-1) @ v


def check(cupy, torch, configs, sizes):
    """Max |O - O_float64| of every configuration at the ``sizes`` (heads, N), within TOLERANCE."""
    rows, ok = [], True
    for fmt, d, kernel, causal in configs:
        for heads, N in sizes:
            Q, K, V = tensors(torch, heads, N, d, fmt, seed=N + d)
            error = float((ours(cupy, torch, Q, K, V, fmt, causal, kernel).double()
                           - reference(torch, Q, K, V, causal)).abs().max())
            good = error <= TOLERANCE[fmt]
            ok &= good
            rows.append({"fmt": fmt, "d": d, "kernel": kernel, "causal": causal, "heads": heads,
                         "N": N, "max_abs_error": error, "ok": bool(good)})
            print(f"check {fmt} d={d} kernel={kernel} causal={causal} heads={heads} N={N}: "
                  f"{error:.2e} {'ok' if good else 'WRONG'}", flush=True)
    return rows, ok


def sdpa_backends(torch):
    from torch.nn.attention import SDPBackend
    return {name: getattr(SDPBackend, attr) for name, attr in (
        ("flash", "FLASH_ATTENTION"), ("efficient", "EFFICIENT_ATTENTION"),
        ("cudnn", "CUDNN_ATTENTION")) if hasattr(SDPBackend, attr)}


def timed(launch, flops, repeats):
    samples = gl.measure.flushed_ms(launch, repeats=repeats, warmup=3, events="cupy")
    ms = float(np.median(samples))
    return {"ms": ms, "tflops": flops / ms / 1e9}


def bench(cupy, torch, B, H, N, d, fmt, causal, repeats):
    from torch.nn.attention import sdpa_kernel
    Q, K, V = (t.reshape(B, H, N, d) for t in tensors(torch, B * H, N, d, fmt, seed=1))
    flops = 4 * B * H * N * N * d * (0.5 if causal else 1.0)      # the two products
    row = {"B": B, "H": H, "N": N, "d": d, "fmt": fmt, "causal": causal, "flops": flops}
    sdpa = torch.nn.functional.scaled_dot_product_attention
    for name, backend in sdpa_backends(torch).items():
        try:
            with sdpa_kernel(backend):
                sdpa(Q, K, V, is_causal=causal)
                row[f"sdpa_{name}"] = timed(lambda: sdpa(Q, K, V, is_causal=causal), flops,
                                            repeats)
        except RuntimeError as err:                # a backend that refuses this shape or type
            row[f"sdpa_{name}"] = {"error": str(err).splitlines()[0][:200]}
    q3, k3, v3 = (t.reshape(B * H, N, d) for t in (Q, K, V))
    for kernel in kernels(cupy):
        name = kernel if kernel in HOPPER_KERNELS else f"w{kernel}"
        row[f"ours_{name}"] = timed(lambda k=kernel: ours(cupy, torch, q3, k3, v3, fmt, causal, k),
                                    flops, repeats)
    best_sdpa = max((k for k in row if k.startswith("sdpa_") and "ms" in row[k]),
                    key=lambda k: row[k]["tflops"])
    best_ours = max((k for k in row if k.startswith("ours_")), key=lambda k: row[k]["tflops"])
    row.update(fastest_sdpa=best_sdpa[5:], ours_best=best_ours[5:],
               ratio=row[best_ours]["tflops"] / row[best_sdpa]["tflops"])
    print(f"B={B} H={H} N={N} d={d} {fmt} causal={causal}: ours {row[best_ours]['tflops']:.0f} "
          f"TFLOP/s ({best_ours[5:]}), SDPA {row[best_sdpa]['tflops']:.0f} ({best_sdpa[5:]}), "
          f"{row['ratio']:.0%}", flush=True)
    return row


def kernels(cupy):
    """Our kernels this GPU runs: mma.sync with 4 and 8 warps, and on sm_90 the wgmma ones."""
    hopper = cupy.cuda.Device().compute_capability == "90"
    return (*flash.WARPS, *(HOPPER_KERNELS if hopper else ()))


def configs(cupy):
    """Every (fmt, d, kernel, causal) the correctness check covers on this GPU."""
    out = list(flash.ALL_CONFIGS)
    if "wgmma" in kernels(cupy):
        out += [(f, d, kernel, c) for f in flash.FORMATS for d in flash_hopper.HEAD_DIMS
                for c in (False, True) for kernel in HOPPER_KERNELS]
    return out


def shapes(quick):
    if quick:
        return [(8, 16, 4096, 128)]
    out = []
    for N in (1024, 2048, 4096, 8192, 16384):
        B = 8 if N <= 4096 else 4
        out += [(B, 16, N, 128), (B, 32, N, 64)]
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--sanitize", action="store_true")
    args = parser.parse_args()
    import cupy
    import torch

    if args.sanitize:
        _, ok = check(cupy, torch, configs(cupy), [(2, 77), (1, 200)])
        sys.exit(0 if ok else 1)
    started = time.time()
    record = {"machine": gl.measure.machine(gpu="cupy", torch=torch.__version__,
                                             cudnn=torch.backends.cudnn.version(),
                                             timer="gl.measure.flushed_ms (L2 flushed)")}
    record["correctness"], ok = check(cupy, torch, configs(cupy), [(3, 1000), (2, 4096)])
    record["results"] = []
    for B, H, N, d in shapes(args.quick):
        for fmt in DTYPES:
            for causal in (False, True):
                record["results"].append(bench(cupy, torch, B, H, N, d, fmt, causal,
                                               repeats=10 if N >= 8192 else 20))
                with open(args.out, "w", encoding="utf-8") as f:
                    json.dump(record, f, indent=1)
    record["seconds"] = time.time() - started
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(record, f, indent=1)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
