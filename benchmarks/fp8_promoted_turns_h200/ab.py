"""FP8 A/B of two source trees (RESULTS.md, "FP8's promoted mode with the consumers taking
turns"): run it once per tree, with PYTHONPATH pointing at the tree to time, and a tag:

    PYTHONPATH=OLD_TREE python3 ab.py old;  PYTHONPATH=NEW_TREE python3 ab.py new

One JSON line per shape: TFLOP/s of torch._scaled_mm (E4M3 in, BF16 out) in its promoted and
fast modes and of our auto plans in the same modes, each timed by gl.measure.flushed_ms (5 rounds
of 10, interleaved, medians), our promoted plan's error against float64 of a 256 x 256 corner,
and our share of the library's same mode."""
import json
import os
import statistics
import sys

os.environ.setdefault("GEMMLAB_BACKEND", "gpu")
import cupy  # noqa: E402
import torch  # noqa: E402

from gemmlab import measure  # noqa: E402
from gemmlab.tensorcore import hopper  # noqa: E402


def launches_of(a8, b8, problems):
    one = torch.ones((), device="cuda")

    def scaled(fast):
        return lambda: torch._scaled_mm(a8, b8.t(), scale_a=one, scale_b=one,
                                        out_dtype=torch.bfloat16, use_fast_accum=fast)
    return {"lib_promoted": scaled(False), "lib_fast": scaled(True),
            **{k: p.launch for k, p in problems.items()}}


def one_shape(tag, M, N, K):
    a8 = torch.randn(M, K, device="cuda").to(torch.float8_e4m3fn)
    b8 = torch.randn(N, K, device="cuda").to(torch.float8_e4m3fn)      # N x K
    A = cupy.from_dlpack(a8.view(torch.uint8))
    B = cupy.from_dlpack(b8.view(torch.uint8)).T                      # K x N view
    problems = {"ours_promoted": hopper.prepare(A, B, stage="auto", bits_as="e4m3", out="bf16",
                                                promote=True),
                "ours_fast": hopper.prepare(A, B, stage="auto", bits_as="e4m3", out="bf16")}
    launches = launches_of(a8, b8, problems)
    problems["ours_promoted"].launch()
    out = hopper.result(problems["ours_promoted"], False)
    ref = a8[:256].double() @ b8[:256].double().t()
    got = torch.from_dlpack(out[:256, :256].view(cupy.uint16)).view(torch.bfloat16).double()
    err = float((got - ref).norm() / ref.norm())
    samples = {k: [] for k in launches}
    for _ in range(5):
        for k, f in launches.items():
            samples[k] += measure.flushed_ms(f, 10, events="cupy")
    ms = {k: statistics.median(v) for k, v in samples.items()}
    print(json.dumps({"tag": tag, "shape": [M, N, K],
                      "tflops": {k: round(2 * M * N * K / v / 1e9, 1) for k, v in ms.items()},
                      "err_promoted": err,
                      "promoted_pct": round(100 * ms["lib_promoted"] / ms["ours_promoted"], 1),
                      "fast_pct": round(100 * ms["lib_fast"] / ms["ours_fast"], 1),
                      "plan": problems["ours_promoted"].plan.describe()}), flush=True)


if __name__ == "__main__":
    for shape in ((4096, 4096, 4096), (8192, 8192, 8192), (4096, 11008, 4096)):
        one_shape(sys.argv[1], *shape)
        cupy.get_default_memory_pool().free_all_blocks()
