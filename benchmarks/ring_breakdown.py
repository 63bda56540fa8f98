"""Where the time of our ring over NCCL goes (issue 17): every way of driving the same ring on N
GPUs, each timed on the GPU's clock and on the host's, and the parts of one step alone; then the
NVLink ring (``collectives.nvlink_ring``) at several launch shapes.

    python benchmarks/ring_breakdown.py --np 2 --out benchmarks/ring_breakdown_np2.json

Starts ``benchmarks/ring_breakdown_rank.py`` on N GPUs through the one launcher
(``gemmlab.collectives.jobs``), prints a table per size and writes the machine, every record and
the attribution of one step's time (at the smallest size, where steps cost the most) to the JSON
file. ``--nccl-log DIR`` also has NCCL write its start-up report there (channels, version) and
keeps the lines that say how many channels point-to-point messages use.
"""
import argparse
import glob
import json
import os
import sys
from pathlib import Path

from gemmlab.collectives import cost, jobs
from gemmlab.collectives.allreduce_command import format_size, parse_size

SIZES = "8KiB,64KiB,1MiB,16MiB,256MiB,1GiB"
RANK_PROGRAM = Path(__file__).with_name("ring_breakdown_rank.py")
STEPWISE, PREPARED = "stepwise: lesson 07's ring, from Python", "ops prepared once, from Python"
GRAPH, TRANSFERS = "CUDA graph, whole chunks", "CUDA graph, transfers only"


def attribution(records, size):
    """Microseconds per ring step at ``size``, split by leaving one part out at a time (GPU clock,
    per call divided by the 2(N-1) steps)."""
    per_step = {r["name"]: r["gpu_us"] / r["steps"] for r in records
                if r["kind"] == "variant" and r["size_bytes"] == size and "gpu_us" in r}
    parts = {r["name"]: {k: r.get(k) for k in ("host_us", "gpu_us")} for r in records
             if r["kind"] == "component" and r["size_bytes"] == size}
    if not all(k in per_step for k in (STEPWISE, PREPARED, GRAPH, TRANSFERS)):
        return {"size_bytes": size, "incomplete": sorted(per_step)}
    return {"size_bytes": size, "stepwise_us_per_step": per_step[STEPWISE],
            "split_us_per_step": {
                "plan, views and checks rebuilt in Python on every call":
                    per_step[STEPWISE] - per_step[PREPARED],
                "host between steps (NCCL group and addition launched from Python)":
                    per_step[PREPARED] - per_step[GRAPH],
                "the addition on the GPU": per_step[GRAPH] - per_step[TRANSFERS],
                "the transfer on the GPU (NCCL send/recv kernel)": per_step[TRANSFERS]},
            "graph_us_per_step": per_step[GRAPH], "parts_alone": parts}


def nccl_lines(log_dir):
    """NCCL's start-up lines about its version and its channels, from one rank's log."""
    logs = sorted(glob.glob(os.path.join(log_dir, "nccl_debug.*")))
    if not logs:
        return []
    words = ("NCCL version", "channels", "p2p", "P2P", "NVLS")
    return [line.strip() for line in Path(logs[0]).read_text(errors="replace").splitlines()
            if any(w in line for w in words)][:40]


def print_table(records):
    print(f"{'size':>9}  {'variant or part':<52}{'GPU us':>10}{'host us':>10}{'us/step':>9}"
          f"{'busbw':>8}  sum")
    for r in records:
        if "error" in r:
            print(f"{format_size(r['size_bytes']):>9}  {r['name']:<52}  ERROR {r['error'][:60]}")
            continue
        gpu = r.get("gpu_us")
        bw = (cost.busbw("allreduce", r["n_ranks"], r["size_bytes"], gpu * 1e-6)
              if gpu and r["kind"] == "variant" else None)
        exact = {True: "exact", False: "WRONG", None: "-"}[r.get("exact")]
        print(f"{format_size(r['size_bytes']):>9}  {r['name']:<52}"
              f"{gpu if gpu is not None else float('nan'):>10.1f}{r['host_us']:>10.1f}"
              f"{(gpu / r['steps']) if gpu and r['kind'] == 'variant' else float('nan'):>9.1f}"
              f"{bw if bw else float('nan'):>8.1f}  {exact}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--np", type=int, default=2, dest="n_ranks")
    parser.add_argument("--sizes", default=SIZES)
    parser.add_argument("--out", required=True, help="the JSON file to write")
    parser.add_argument("--nccl-log", help="a folder for NCCL's start-up report")
    parser.add_argument("--timeout", type=int, default=300)
    args = parser.parse_args(argv)
    sizes = [parse_size(s) for s in args.sizes.split(",")]
    env = {}
    if args.nccl_log:
        os.makedirs(args.nccl_log, exist_ok=True)
        env = {"NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT,P2P",
               "NCCL_DEBUG_FILE": os.path.join(args.nccl_log, "nccl_debug.%h.%p")}
    records = jobs.run(args.n_ranks, [RANK_PROGRAM, "--sizes", ",".join(map(str, sizes))],
                       timeout=args.timeout, env=env)
    machine = next(r for r in records if r["kind"] == "machine")
    measured = [r for r in records if r["kind"] != "machine"]
    print_table(measured)
    report = {"machine": machine, "n_ranks": args.n_ranks, "records": measured,
              "attribution": attribution(measured, min(sizes)),
              "nccl_init": nccl_lines(args.nccl_log) if args.nccl_log else []}
    print(json.dumps(report["attribution"], indent=1))
    Path(args.out).write_text(json.dumps(report, indent=1) + "\n")
    return 0 if not any(r.get("error") or r.get("exact") is False for r in measured) else 1


if __name__ == "__main__":
    sys.exit(main())
