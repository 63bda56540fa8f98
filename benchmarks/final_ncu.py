"""Nsight Compute on the final plans (issue 39): one launch of the plan ``hopper``'s auto rule
picks at each FP16 shape of ``library_gpu.SHAPES`` (FP16 out), and of the FP8 fast and promoted
auto plans at 8192^3 (E4M3 in, BF16 out), profiled with ``--clock-control none``.

    python benchmarks/final_ncu.py OUT_DIR          # ncu on --launch; OUT_DIR/hopper_final_ncu.{csv,json}
    python benchmarks/final_ncu.py --launch SPEC ...  # one launch of each "MxNxK:fp16|fp8|fp8p"
    python benchmarks/final_ncu.py --summary OUT_DIR  # the JSON again from the CSV (132 SMs)

The CSV is ncu's raw page (base units: ns, bytes) of the saved report; the JSON holds, per launch,
the plan, duration, SM / DRAM / L2 throughput, achieved DRAM GB/s, tensor pipe, achieved
occupancy, registers and the top stall reasons (average warps stalled per issued instruction).
"""
import csv
import json
import os
import subprocess
import sys

os.environ.setdefault("GEMMLAB_BACKEND", "gpu")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from library_gpu import SHAPES, goal                                  # noqa: E402

from gemmlab.tensorcore import hopper                                 # noqa: E402

SPECS = ["x".join(map(str, s)) + ":fp16" for s in SHAPES] + ["8192x8192x8192:fp8",
                                                            "8192x8192x8192:fp8p"]
SECTIONS = ("SpeedOfLight", "Occupancy", "LaunchStats", "WarpStateStats", "MemoryWorkloadAnalysis")
METRICS = ("regex:smsp__average_warps_issue_stalled_.*_per_issue_active\\.ratio",
           "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
           "dram__bytes.sum", "lts__t_sectors.avg.pct_of_peak_sustained_elapsed",
           "sm__warps_active.avg.pct_of_peak_sustained_active", "launch__registers_per_thread")
STALL = "smsp__average_warps_issue_stalled_"
HERE = os.path.dirname(os.path.abspath(__file__))


def parse(spec):
    shape, _, kind = spec.partition(":")
    return tuple(int(x) for x in shape.split("x")), kind


def plan_options(kind):
    return {"fp16": {"out": "fp16"}, "fp8": {"out": "bf16", "fmt": "e4m3"},
            "fp8p": {"out": "bf16", "fmt": "e4m3", "promote": True}}[kind]


def launch(specs):
    import cupy
    import torch
    from hopper_gpu import device_inputs
    for spec in specs:
        (M, N, K), kind = parse(spec)
        if kind == "fp16":
            A, B = device_inputs(M, N, K, "fp16", seed=7)
            problem = hopper.prepare(A, B, stage="auto", out="fp16")
        else:                                  # as library_gpu.fp8_shape: B given K x N
            a = torch.randn(M, K, device="cuda").to(torch.float8_e4m3fn)
            b_nk = torch.randn(N, K, device="cuda").to(torch.float8_e4m3fn)
            A, B = cupy.from_dlpack(a.view(torch.uint8)), cupy.from_dlpack(b_nk.view(torch.uint8)).T
            problem = hopper.prepare(A, B, stage="auto", bits_as="e4m3", out="bf16",
                                     promote=kind == "fp8p")
        problem.launch()
        cupy.cuda.Device().synchronize()
        print(spec, problem.plan.describe(), problem.plan.kernel, file=sys.stderr, flush=True)
        del problem, A, B
        cupy.get_default_memory_pool().free_all_blocks()


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def summary(spec, row, sms, described=None):
    """One profile's figures; ``described``: the plan as recorded when it was profiled (the
    rule's pick today when None)."""
    (M, N, K), kind = parse(spec)
    described = described or hopper.plan("auto", M, N, K, sms, **plan_options(kind)).describe()
    ns = number(row["gpu__time_duration.sum"])
    get = lambda k: number(row.get(k, "n/a"))                         # noqa: E731
    stalls = {k[len(STALL):].split("_per_issue")[0]: get(k) for k in row if k.startswith(STALL)}
    stalls = {k: v for k, v in sorted(stalls.items(), key=lambda kv: -(kv[1] or 0)) if v}
    return {"spec": spec, "shape": [M, N, K], "plan": described, "kernel": row["Kernel Name"],
            "goal_pct": goal((M, N, K)) if kind == "fp16" else 90,
            "grid": row.get("Grid Size"), "block": row.get("Block Size"),
            "duration_us": ns / 1e3, "tflops": 2.0 * M * N * K / ns / 1e3,
            "sm_throughput_pct": get("sm__throughput.avg.pct_of_peak_sustained_elapsed"),
            "dram_throughput_pct": get("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"),
            "dram_gbs": (get("dram__bytes.sum") or 0) / ns,
            "l2_sectors_pct": get("lts__t_sectors.avg.pct_of_peak_sustained_elapsed"),
            "tensor_pipe_pct_active": get(
                "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"),
            "tensor_pipe_pct_elapsed": get(
                "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed"),
            "sm_clock_ghz": get("gpc__cycles_elapsed.avg.per_second") / 1e9,
            "achieved_occupancy_pct": get("sm__warps_active.avg.pct_of_peak_sustained_active"),
            "registers": get("launch__registers_per_thread"),
            "smem_per_block": get("launch__shared_mem_per_block_dynamic"),
            "top_stalls": dict([kv for kv in stalls.items() if kv[0] != "selected"][:4]),
            "stalls": stalls}


def main(out_dir):
    import cupy
    os.makedirs(out_dir, exist_ok=True)
    rep, path = os.path.join(out_dir, "hopper_final"), os.path.join(out_dir, "hopper_final_ncu.csv")
    cmd = ["ncu", "--clock-control", "none", "-k", "regex:hopper", "-c", str(len(SPECS)), "-f",
           "-o", rep]
    for s in SECTIONS:
        cmd += ["--section", s]
    subprocess.run(cmd + ["--metrics", ",".join(METRICS), sys.executable, __file__, "--launch",
                          *SPECS], check=True)
    with open(path, "w") as f:
        subprocess.run(["ncu", "-i", rep + ".ncu-rep", "--csv", "--page", "raw", "--print-units",
                        "base"], stdout=f, check=True)
    version = subprocess.run(["ncu", "--version"], capture_output=True, text=True).stdout
    from gemmlab import measure
    write_summary(out_dir, cupy.cuda.Device().attributes["MultiProcessorCount"],
                  version.strip().splitlines()[-1], measure.machine())


def baselines(paths):
    """{spec: (library, ms)} from the library records at ``paths`` (the first that has a spec
    wins): each FP16 shape's best library and ``torch._scaled_mm`` per FP8 accumulation mode."""
    found = {}
    for path in paths:
        try:
            record = json.load(open(path))
        except OSError:
            continue
        for r in record.get("fp16", []):
            found.setdefault("x".join(map(str, r["shape"])) + ":fp16",
                             (r["baseline"], r["baseline_ms"], path))
        for r in record.get("fp8", []):
            lib = r["torch._scaled_mm_e4m3_bf16_out"]
            for kind, mode in (("fp8", "fast"), ("fp8p", "promoted")):
                if mode not in lib:        # library_h200.json's FP8 part: one mode, unnamed
                    continue
                found.setdefault("x".join(map(str, r["shape"])) + ":" + kind,
                                 ("torch._scaled_mm " + mode, lib[mode]["ms"], path))
    return found


def baseline_paths(out_dir, gpu):
    """The same device call's ``library.json`` first, then the record of this GPU beside here."""
    kept = ["library_h100.json"] if "H100" in gpu else ["library_h200.json", "fp8_h200.json"]
    return [os.path.join(out_dir, "library.json")] + [os.path.join(HERE, k) for k in kept]


def write_summary(out_dir, sms, ncu_version, machine, plans=None, records=None):
    """hopper_final_ncu.json from hopper_final_ncu.csv (also alone: --summary OUT_DIR, which keeps
    the ``plans`` {spec: description} and the library ``records`` (paths) of the time)."""
    path = os.path.join(out_dir, "hopper_final_ncu.csv")
    rows = list(csv.reader(open(path)))
    start = next(i for i, r in enumerate(rows) if r and r[0] == "ID")
    header = rows[start]
    found = [dict(zip(header, r, strict=True)) for r in rows[start + 2:] if len(r) == len(header)]
    base = baselines(records or baseline_paths(out_dir, machine.get("gpu", "")))
    record = {"machine": machine,
              "note": "Nsight Compute, one launch of each final (auto) plan, --clock-control none, "
                      "ncu's cache control (L2 flushed before each pass); stalls: average warps "
                      "stalled per issued instruction",
              "ncu_version": ncu_version,
              "baselines": "the best library's flushed_ms median (FP16) and torch._scaled_mm's "
                           "in the same accumulation mode (FP8), from the record each profile "
                           "names (library_record)",
              "profiles": [summary(s, r, sms, (plans or {}).get(s))
                           for s, r in zip(SPECS, found, strict=True)]}
    for p in record["profiles"]:
        name, ms, path = base.get(p["spec"], (None, None, None))
        if ms:
            p.update(library=name, library_us=1e3 * ms, pct_of_library=1e5 * ms / p["duration_us"],
                     library_record=os.path.relpath(path, HERE) if path.startswith(HERE)
                     else os.path.basename(path))
    with open(os.path.join(out_dir, "hopper_final_ncu.json"), "w") as f:
        json.dump(record, f, indent=1)
    keys = ("duration_us", "tflops", "sm_throughput_pct", "dram_throughput_pct", "dram_gbs",
            "tensor_pipe_pct_active", "achieved_occupancy_pct", "registers", "sm_clock_ghz",
            "pct_of_library")
    for p in record["profiles"]:
        print(p["spec"], p["plan"], *(f"{k}={p.get(k)}" for k in keys), list(p["top_stalls"].items())[:3])


if __name__ == "__main__":
    if sys.argv[1:2] == ["--launch"]:
        launch(sys.argv[2:])
    elif sys.argv[1:2] == ["--summary"]:
        with open(os.path.join(sys.argv[2], "hopper_final_ncu.json")) as f:
            old = json.load(f)
        records = sorted({p["library_record"] for p in old["profiles"] if "library_record" in p})
        write_summary(sys.argv[2], 132, old["ncu_version"], old["machine"],
                      {p["spec"]: p["plan"] for p in old["profiles"]},
                      [os.path.join(HERE, r) for r in records])
    else:
        main(sys.argv[1] if len(sys.argv) > 1 else "benchmarks")
