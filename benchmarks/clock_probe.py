"""Why one kernel times differently in one run (issue 39): the same staged 128 x 256 plan at
8192^3 measured 75% of the best library as "auto" and 84% under its own name in the same
interleaved rounds, and 94% as a single launch under Nsight Compute. This times the same launches
in two orders, with the SM clock, power and the driver's clock-event reasons sampled beside them
(``gpu_clocks.Sampler``), and the persistent kernels' tile order (``group_m``) varied.

    GEMMLAB_BACKEND=gpu python benchmarks/clock_probe.py --out DIR/clock_probe.json [--size 8192]
"""
import argparse
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_clocks import Sampler                             # noqa: E402
from hopper_gpu import device_inputs                       # noqa: E402 (sets up the backend)
from library_gpu import interleaved_samples                # noqa: E402

from gemmlab import measure                                # noqa: E402
from gemmlab.tensorcore import hopper, libraries           # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--size", type=int, default=8192)
    args = ap.parse_args()
    import cupy
    n = args.size
    A, B = device_inputs(n, n, n, "fp16", seed=7)
    out = cupy.empty((n, n), dtype=cupy.float16)
    found, _ = libraries.launchers(A, B, out, ["cupy.matmul", libraries.NVMATH])
    problems = {"auto": hopper.prepare(A, B, stage="auto", out="fp16"),
                "staged": hopper.prepare(A, B, stage="persistent", epilogue="staged", out="fp16"),
                "auto_again": hopper.prepare(A, B, stage="auto", out="fp16"),
                "staged_g16": hopper.prepare(A, B, stage="persistent", epilogue="staged",
                                             out="fp16", group_m=16),
                "staged_g4": hopper.prepare(A, B, stage="persistent", epilogue="staged",
                                            out="fp16", group_m=4)}
    launches = {**found, **{k: p.launch for k, p in problems.items()}}
    for launch in launches.values():
        launch()
    keys = list(launches)
    results, batch = {}, {}
    with Sampler() as clocks:
        for name, order in (("forward", keys), ("reverse", keys[::-1]), ("forward_again", keys)):
            samples, spans = interleaved_samples(launches, order)
            results[name] = {"order": order, "_spans": spans, "_samples": samples, "keys": {}}
        for key in keys:                   # back to back, no flush: the sustained rate
            batch[key] = measure.cuda_event_ms(launches[key], 1, 0, events="cupy", batch=20)[0]
    flops = 2.0 * n ** 3
    for name, r in results.items():
        spans, samples = r.pop("_spans"), r.pop("_samples")
        for key in r["order"]:
            ms = statistics.median(t for one in samples[key] for t in one)
            r["keys"][key] = {"median_ms": ms, "tflops": flops / ms / 1e9,
                              "per_round_median_ms": [statistics.median(one)
                                                      for one in samples[key]],
                              **clocks.during(*spans[key])}
        print(name)
        for key, v in r["keys"].items():
            print(f"  {key:24s} {v['median_ms']:.3f} ms {v['tflops']:6.1f} TFLOP/s "
                  f"{v.get('sm_mhz_mean', 0):6.0f} MHz {v.get('watts_mean', 0):5.0f} W "
                  f"{v.get('clock_event_reasons')} "
                  f"rounds {[round(x, 3) for x in v['per_round_median_ms']]}")
    print("back to back (ms):", {k: round(v, 3) for k, v in batch.items()})
    record = {"machine": measure.machine(), "size": n, "timer": measure.FLUSHED_METHOD,
              "plans": {k: p.plan.describe() + f", group_m={p.group_m}"
                        for k, p in problems.items()},
              "runs": results, "back_to_back_ms": batch,
              "clock_samples": len(clocks.samples), "clocks_missing": clocks.missing}
    with open(args.out, "w") as f:
        json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()
