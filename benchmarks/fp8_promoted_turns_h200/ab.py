"""FP8 promoted A/B: run with PYTHONPATH pointing at the tree to time (old or new). Prints one
line per shape: TFLOP/s of _scaled_mm promoted/fast and of our promoted/fast auto plans."""
import os, sys, statistics, json
os.environ.setdefault("GEMMLAB_BACKEND", "gpu")
import cupy, torch
import gemmlab
from gemmlab import measure
from gemmlab.tensorcore import hopper
tag = sys.argv[1]
for M, N, K in ((4096, 4096, 4096), (8192, 8192, 8192), (4096, 11008, 4096)):
    a8 = torch.randn(M, K, device="cuda").to(torch.float8_e4m3fn)
    b8 = torch.randn(N, K, device="cuda").to(torch.float8_e4m3fn)      # N x K
    one = torch.ones((), device="cuda")
    A = cupy.from_dlpack(a8.view(torch.uint8))
    B = cupy.from_dlpack(b8.view(torch.uint8)).T                      # K x N view
    launches = {
        "lib_promoted": lambda: torch._scaled_mm(a8, b8.t(), scale_a=one, scale_b=one,
                                                 out_dtype=torch.bfloat16, use_fast_accum=False),
        "lib_fast": lambda: torch._scaled_mm(a8, b8.t(), scale_a=one, scale_b=one,
                                             out_dtype=torch.bfloat16, use_fast_accum=True)}
    problems = {"ours_promoted": hopper.prepare(A, B, stage="auto", bits_as="e4m3", out="bf16", promote=True),
                "ours_fast": hopper.prepare(A, B, stage="auto", bits_as="e4m3", out="bf16")}
    for k, p in problems.items():
        launches[k] = p.launch
        p.launch()
    # correctness of the promoted output on a corner, against float64 of the FP8 inputs
    out = hopper.result(problems["ours_promoted"], False)
    ref = a8[:256].double() @ b8[:256].double().t()
    got = torch.from_dlpack(out[:256, :256].view(cupy.uint16)).view(torch.bfloat16).double()
    err = float((got - ref).norm() / ref.norm())
    samples = {k: [] for k in launches}
    for _ in range(5):
        for k, f in launches.items():
            samples[k] += measure.flushed_ms(f, 10, events="cupy")
    ms = {k: statistics.median(v) for k, v in samples.items()}
    tf = {k: round(2 * M * N * K / v / 1e9, 1) for k, v in ms.items()}
    print(json.dumps({"tag": tag, "shape": [M, N, K], "tflops": tf, "err_promoted": err,
                      "promoted_pct": round(100 * ms["lib_promoted"] / ms["ours_promoted"], 1),
                      "fast_pct": round(100 * ms["lib_fast"] / ms["ours_fast"], 1),
                      "plan": problems["ours_promoted"].plan.describe()}), flush=True)
    del problems, launches, A, B, a8, b8
    cupy.get_default_memory_pool().free_all_blocks()
