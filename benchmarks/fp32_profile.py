"""Fold the Nsight Compute profile of lesson 11's last step into its benchmark record.

``benchmarks/gpu_ladder.sh`` (step 6) profiles one 4096^3 launch of each kernel of step 2 with
``ncu --csv --page raw``; the launches come in the order of the specs. This reads that CSV and
writes, per spec, what the lesson and RESULTS.md quote: time, registers, warps active, issue rate,
warp instructions, the FFMA share of them and the stall reasons (average warps stalled per issued
instruction), under "profile" in the run's JSON (the same run, the same machine).

    python benchmarks/fp32_profile.py OUT/ncu_fp32.csv --into OUT/gpu_fp32.json SPEC [SPEC ...]
"""
import argparse
import csv
import json

STALL = "smsp__average_warps_issue_stalled_"


def number(text):
    return float(text.replace(",", ""))


def launches(path):
    """One {metric: text} per profiled launch, in launch order (the CSV has a preamble)."""
    rows = list(csv.reader(open(path)))
    start = next(i for i, row in enumerate(rows) if row and row[0] == "ID")
    header = rows[start]
    return [dict(zip(header, row, strict=True)) for row in rows[start + 2:] if len(row) == len(header)]


def summary(spec, launch):
    instructions = number(launch["smsp__inst_executed.sum"])
    ffma = number(launch["smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"]) / 32   # per warp
    return {
        "spec": spec,
        "kernel": launch["Kernel Name"].split("::")[0],
        "time_ms": number(launch["gpu__time_duration.sum"]) / 1e6,
        "regs": int(number(launch["launch__registers_per_thread"])),
        "blocks_per_sm_by_registers": int(number(launch["launch__occupancy_limit_registers"])),
        "warps_active_pct": number(launch["sm__warps_active.avg.pct_of_peak_sustained_active"]),
        "issue_per_cycle": number(launch["smsp__issue_active.avg.per_cycle_active"]),
        "warp_instructions": instructions,
        "ffma_share": ffma / instructions,
        "shared_wavefronts": number(launch["l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"]),
        "stalls": {key[len(STALL):].split("_per_issue")[0]: number(value)
                   for key, value in launch.items() if key.startswith(STALL)},
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv")
    parser.add_argument("--into", required=True, help="the gemmlab bench JSON of the same run")
    parser.add_argument("specs", nargs="+", help="the kernel specs, in the order they ran")
    args = parser.parse_args()
    found = launches(args.csv)
    if len(found) != len(args.specs):
        raise SystemExit(f"{args.csv}: {len(found)} launches for {len(args.specs)} specs")
    record = json.load(open(args.into))
    record["profile"] = [summary(spec, launch) for spec, launch in zip(args.specs, found, strict=True)]
    record["profile_note"] = ("Nsight Compute, one 4096^3 launch each, --clock-control none; "
                              "stalls: average warps stalled per issued instruction")
    with open(args.into, "w") as f:
        json.dump(record, f, indent=1)
        f.write("\n")
    for p in record["profile"]:
        print(f"{p['spec']:34s} {p['time_ms']:.3f} ms  {p['regs']} regs  "
              f"{p['warps_active_pct']:.1f}% warps  issue {p['issue_per_cycle']:.2f}  "
              f"FFMA {100 * p['ffma_share']:.1f}%  long_scoreboard "
              f"{p['stalls'].get('long_scoreboard')}")


if __name__ == "__main__":
    main()
