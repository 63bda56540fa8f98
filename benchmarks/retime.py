"""Re-time a GPU speed record with a timer that is not ours (issue 58): every figure of the record
rebuilt as the same launch and timed by Triton's ``do_bench`` (its own L2 flush, its own median),
beside the record's figure, and how far each moved.

    python benchmarks/retime.py benchmarks/library_h100.json --out DIR      # the goals' figures
    python benchmarks/retime.py benchmarks/library_h100.json --out DIR --all
    python benchmarks/retime.py RECORD --out DIR --only hopper:auto --only "fp32 "
    python benchmarks/retime.py RECORD --list       # the figures, their time, stale plans; no GPU

Records read: library_gpu.py's (library_h100.json, library_h200.json), gemm_host.py's
(gemm_host_h100.json) and attention_gpu.py's (attention_h100.json). The course's timer
(``gl.measure.flushed_ms``) made them; this script never imports it. Each figure is timed by
``do_bench(launch, return_mode="median")`` in ROUNDS round-robin rounds over the figures of its
group (a shape: same inputs, as the record timed them), its figure the median of the rounds, so
that a clock lowered by the power cap weighs on every figure of the group alike. A host cost (us
a call, on the host clock in the record) is timed on the host clock again: blocks of calls,
synchronised after each, the median block; ``do_bench`` times the GPU, not the host.

The record must come from the GPU model it runs on (its ``machine.gpu``); another is refused (exit
2). Writes DIR/retime_<record>.json (machine, clocks, every figure) and DIR/retime_<record>.md
(the table: record, re-timed, difference, within 5%, and each figure's ratio to its library in
the record and re-timed), and exits 1 naming every figure more than 5% away, or whose launch
could not be rebuilt as the record made it (a plan the auto rule no longer picks, say).
By default only the figures issue 58's goals name are timed (FP16 at 4096^3, 8192^3 and
4096 x 11008 x 4096, the FP8 shapes, FP32 through gl.gemm, the host cost), with the library
figures their ratios need; ``--all`` times every figure, ``--only TEXT`` those whose name has TEXT.
"""
import argparse
import json
import math
import os
import sys
from dataclasses import dataclass
from pathlib import Path

TOLERANCE_PCT = 5.0
ROUNDS = 3
WARMUP_MS = 25          # do_bench's defaults: warm-up and repetition time
REP_MS = 100
MIN_SAMPLES = 25        # a launch longer than REP_MS / MIN_SAMPLES gets a longer repetition time
GOAL_FP16 = ((4096, 4096, 4096), (8192, 8192, 8192), (4096, 11008, 4096))
COPY_BYTES = 2 * 2 ** 31                # library_gpu.copy_gbs: 2 GiB read and 2 GiB written
HOST_CALLS = {   # the records' host costs -> the call each timed
    "gl.gemm (cached configuration)": {"call": "gl.gemm", "arrays": "numba"},
    "gl.gemm (configuration made each call, as before)": {"call": "gl.gemm uncached",
                                                          "arrays": "numba"},
    "configured launch alone": {"call": "configured launch"},
    "output allocation alone": {"call": "output allocation"},
    "gl.gemm, CuPy in and out": {"call": "gl.gemm", "arrays": "cupy"},
    "gl.gemm, numba device arrays in and out": {"call": "gl.gemm", "arrays": "numba"},
    "before: numba's configured launch alone": {"call": "configured launch"},
    "before: numba's output allocation alone": {"call": "output allocation"},
    "cupy.matmul (cuBLAS), for comparison": {"call": "cupy.matmul"},
}


@dataclass(frozen=True)
class Figure:
    """One timed figure of a record and how to launch it again."""
    name: str                   # unique in the record: "fp16 4096x4096x4096 hopper:auto out=fp16"
    group: str                  # the figures timed on the same inputs, in turn
    launch: dict                # the launch: "kind" and its parameters, "inputs" and theirs
    recorded_ms: float          # the record's time (a host cost: its us / 1000)
    unit: str                   # what the table shows: "TFLOP/s", "GB/s" or "us"
    work: float = 0.0           # FLOPs (TFLOP/s) or bytes (GB/s)
    versus: tuple = ()          # the library figures whose fastest this one is a ratio to
    by_default: bool = True     # named by the goals (or needed for their ratios)
    clocks: dict | None = None  # the SM clock the record sampled while the group was timed

    def value(self, ms):
        """The figure as the table shows it, from a time in ms."""
        if self.unit == "us":
            return ms * 1000
        return self.work / ms / (1e9 if self.unit == "TFLOP/s" else 1e6)


class WrongGPU(ValueError):
    """The record was made on another GPU model than the one in hand."""


def _mnk(shape):
    return "x".join(str(int(x)) for x in shape)


def _options(options):
    return " ".join(f"{k}={v}" for k, v in options.items())


def _hopper(row, inputs, fmt):
    """The launch of one of our Hopper plans: stage and options as recorded, and the plan the
    record says they gave (checked when rebuilt)."""
    stage = row["kernel"].removeprefix("hopper:")
    return {"kind": "hopper", "stage": stage, "options": row.get("options", {}),
            "plan": row["plan"], "fmt": fmt, **inputs}


def _fp16(row):
    shape = tuple(row["shape"])
    group = f"fp16 {_mnk(shape)}"
    inputs = {"inputs": "fp16", "shape": list(shape)}
    common = {"group": group, "unit": "TFLOP/s", "work": 2.0 * math.prod(shape),
              "clocks": row.get("clocks")}
    goal = shape in GOAL_FP16
    libs = [Figure(f"{group} {r['kernel']}", launch={"kind": "library", "library": r["kernel"],
                                                     **inputs},
                   recorded_ms=r["ms"], by_default=goal, **common) for r in row["libraries"]]
    versus = tuple(f.name for f in libs)
    ours = [Figure(f"{group} {r['kernel']} {_options(r['options'])}",
                   launch=_hopper(r, inputs, "fp16"), recorded_ms=r["ms"], versus=versus,
                   by_default=goal, **common) for r in row["ours"] if "ms" in r]
    other = []
    for r in row.get("other", []):
        kernel = r["kernel"]
        if kernel == "cublas_gemmEx_fp16_out32":
            name, launch, against = kernel, {"kind": "gemmex", **inputs}, ()
        elif kernel == "wmma":
            name, launch, against = kernel, {"kind": "wmma", **inputs}, versus
        elif kernel.startswith("hopper:"):
            name, launch, against = f"ladder {kernel}", _hopper(r, inputs, "fp16"), versus
        else:
            raise ValueError(f"{group}: the record's kernel {kernel!r} has no launch known here")
        other.append(Figure(f"{group} {name}", launch=launch, recorded_ms=r["ms"],
                            versus=against, by_default=False, **common))
    return libs + ours + other


def _fp8(row):
    shape = tuple(row["shape"])
    group = f"fp8 {_mnk(shape)}"
    inputs = {"inputs": "fp8", "shape": list(shape)}
    common = {"group": group, "unit": "TFLOP/s", "work": 2.0 * math.prod(shape)}
    library = row["torch._scaled_mm_e4m3_bf16_out"]
    # before the FP8 rung the record held one call, with torch's default use_fast_accum=False
    modes = {"promoted": library} if "ms" in library else library
    scaled = {mode: Figure(f"{group} torch._scaled_mm {mode}",
                           launch={"kind": "scaled_mm", "fast": mode == "fast", **inputs},
                           recorded_ms=m["ms"], **common) for mode, m in modes.items()}
    ours = []
    for r in row.get("ours", []):
        if "ms" not in r:
            continue
        if r["accumulation"] not in scaled:
            raise ValueError(f"{group}: {r['kernel']} {r['options']} sums {r['accumulation']!r}, "
                             f"but the record timed _scaled_mm only in {sorted(scaled)}")
        ours.append(Figure(f"{group} {r['kernel']} {_options(r['options'])}",
                           launch=_hopper(r, inputs, "e4m3"), recorded_ms=r["ms"],
                           versus=(scaled[r["accumulation"]].name,), **common))
    bf16 = Figure(f"{group} torch.matmul bf16", launch={"kind": "bf16_matmul", **inputs},
                  recorded_ms=row["torch.matmul_bf16"]["ms"], by_default=False, **common)
    return [*scaled.values(), *ours, bf16]


def _fp32_group(n, library_ms, ours, inputs_extra=None):
    """FP32 figures at n^3: the libraries ({name: ms}) and ours ([(label, launch, ms)])."""
    group = f"fp32 {_mnk((n, n, n))}"
    inputs = {"inputs": "fp32", "shape": [n, n, n], **(inputs_extra or {})}
    common = {"group": group, "unit": "TFLOP/s", "work": 2.0 * n ** 3}
    libs = [Figure(f"{group} {name}", launch={"kind": "library", "library": name, **inputs},
                   recorded_ms=ms, **common) for name, ms in library_ms.items()]
    versus = tuple(f.name for f in libs)
    return libs + [Figure(f"{group} {label}", launch={**launch, **inputs}, recorded_ms=ms,
                          versus=versus, **common) for label, launch, ms in ours]


def _host(costs, by_default):
    group = "host 256x256x256"
    found = []
    for key, us in costs.items():
        if key not in HOST_CALLS:
            raise ValueError(f"host cost {key!r}: no call known here for it "
                             f"(known: {', '.join(HOST_CALLS)})")
        found.append(Figure(f"{group} {key}", group, {"kind": "host", **HOST_CALLS[key],
                                                      "inputs": "host", "shape": [256] * 3},
                            us / 1000, "us", by_default=by_default))
    return found


def library_figures(record):
    """The figures of a library_gpu.py record: fp16, fp32, host cost, fp8 and the copy."""
    found = [f for row in record.get("fp16", []) for f in _fp16(row)]
    for row in record.get("fp32", []):
        n = row["shape"][0]
        found += _fp32_group(n, {r["kernel"]: r["ms"] for r in row["libraries"]}, [
            ("unrolled (configured launch)", {"kind": "unrolled"}, row["unrolled"]["ms"]),
            ("gl.gemm unrolled (numba arrays)", {"kind": "gl.gemm", "arrays": "numba"},
             row["unrolled_through_gl_gemm"]["ms"])])
    found += _host(record.get("gl_gemm_host_us_per_call_256", {}), by_default=False)
    found += [f for row in record.get("fp8", []) for f in _fp8(row)]
    if "copy_gbs" in record:
        found.append(Figure("copy 2 GiB cupy.copyto", "copy 2 GiB",
                            {"kind": "copy", "inputs": "copy", "bytes": COPY_BYTES},
                            COPY_BYTES / record["copy_gbs"] / 1e6, "GB/s", COPY_BYTES,
                            by_default=False))
    return found


def gemm_host_figures(record):
    """The figures of a gemm_host.py record: the host costs and gl.gemm's FP32 with CuPy arrays."""
    found = _host(record["host_us_per_call_256"], by_default=True)
    for row in record.get("fp32", []):
        ms = dict(row["ms"])
        ours = ms.pop("gl.gemm unrolled")
        found += _fp32_group(row["n"], ms, [("gl.gemm unrolled (CuPy arrays)",
                                             {"kind": "gl.gemm", "arrays": "cupy"}, ours)])
    return found


def _attention_kernel(name):
    """attention_gpu.py's kernel argument for a record's entry name: "w4" and "w8" (mma.sync, that
    many warps) give 4 and 8, "wgmma" and "wgmma_pingpong" themselves."""
    return int(name[1:]) if name[1:].isdigit() else name


def attention_figures(record):
    """The figures of an attention_gpu.py record: each SDPA backend and each of our kernels."""
    found = []
    for row in record["results"]:
        B, H, N, d, fmt, causal = (row[k] for k in ("B", "H", "N", "d", "fmt", "causal"))
        group = f"attention B={B} H={H} N={N} d={d} {fmt} {'causal' if causal else 'full'}"
        inputs = {"inputs": "attention", "B": B, "H": H, "N": N, "d": d, "fmt": fmt,
                  "causal": causal}
        common = {"group": group, "unit": "TFLOP/s", "work": row["flops"]}
        sdpa = [Figure(f"{group} sdpa {key[5:]}", launch={"kind": "sdpa", "backend": key[5:],
                                                          **inputs},
                       recorded_ms=row[key]["ms"], **common)
                for key in row if key.startswith("sdpa_") and "ms" in row[key]]
        versus = tuple(f.name for f in sdpa)
        found += sdpa + [Figure(f"{group} ours {key[5:]}", launch={
            "kind": "flash", "kernel": _attention_kernel(key[5:]), **inputs},
            recorded_ms=row[key]["ms"], versus=versus, **common)
            for key in row if key.startswith("ours_") and key != "ours_best"]
    return found


def read_figures(record):
    """Every timed figure of a record, in its order; a record of no known kind is refused."""
    if "host_us_per_call_256" in record:
        found = gemm_host_figures(record)
    elif "results" in record and "correctness" in record:
        found = attention_figures(record)
    elif any(part in record for part in ("fp16", "fp32", "fp8")):
        found = library_figures(record)
    else:
        raise ValueError("not a record retime.py knows: expected library_gpu.py's (fp16, fp32, "
                         "fp8), gemm_host.py's (host_us_per_call_256) or attention_gpu.py's "
                         f"(results, correctness); this one has {sorted(record)}")
    names = [f.name for f in found]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"the record times these figures twice: {twice}")
    return found


def select(figures, only=(), everything=False):
    """The figures to time: all, those whose name holds one of ``only``, or those by default;
    with the library figures their ratios are taken to."""
    if everything:
        chosen = figures
    elif only:
        chosen = [f for f in figures if any(text in f.name for text in only)]
    else:
        chosen = [f for f in figures if f.by_default]
    if not chosen:
        raise ValueError(f"no figure of the record matches {list(only) or 'the default'}; "
                         f"names look like {figures[0].name!r}" if figures else
                         "the record holds no timed figure")
    wanted = {f.name for f in chosen} | {v for f in chosen for v in f.versus}
    return [f for f in figures if f.name in wanted]


def stale_plans(figures, sms):
    """{name: the plan its stage and options give now} of the Hopper figures whose record names
    another: what a GPU run will report instead of timing (plain Python, no GPU needed)."""
    from gemmlab.tensorcore import hopper
    found = {}
    for f in figures:
        spec = f.launch
        if spec["kind"] != "hopper":
            continue
        try:
            now = hopper.plan(spec["stage"], *spec["shape"], sms=sms, fmt=spec["fmt"],
                              **spec["options"]).describe()
        except ValueError as err:
            now = f"refused: {err}"
        if now != spec["plan"]:
            found[f.name] = now
    return found


def rep_ms(figure):
    """do_bench's repetition time for a figure: its default, or MIN_SAMPLES launches."""
    return max(REP_MS, MIN_SAMPLES * figure.recorded_ms)


def estimated_seconds(figures, rounds):
    """Seconds of timing the figures need at least (building launches, autotuning not counted)."""
    per_round = sum((WARMUP_MS + rep_ms(f) + 5 * f.recorded_ms) / 1000 for f in figures
                    if f.unit != "us")
    return rounds * per_round


def check_same_gpu(record, gpu):
    """Refuse a record made on another GPU model than ``gpu`` (the name the driver gives)."""
    made_on = (record.get("machine") or {}).get("gpu")
    if not made_on:
        raise WrongGPU("the record names no GPU (no machine.gpu), so it cannot be matched to "
                       f"this one ({gpu})")
    if made_on.strip() != gpu.strip():
        raise WrongGPU(f"the record was made on {made_on!r}, this GPU is {gpu!r}: re-time the "
                       "record of this model (library_h100.json on an H100, library_h200.json "
                       "on an H200)")


def _ratio(figure, ms, own_ms):
    """% of the fastest of the figure's libraries (their times in ``ms``), or None without them."""
    if not figure.versus or own_ms is None or any(ms.get(v) is None for v in figure.versus):
        return None, None
    fastest = min(figure.versus, key=ms.get)
    return 100 * ms[fastest] / own_ms, fastest.removeprefix(figure.group + " ")


def compare(figures, retimed_ms, failures):
    """One row per figure: the record's value, the re-timed one, the difference in % of the
    record's, whether it is within TOLERANCE_PCT, and the ratio to its libraries in both.
    ``retimed_ms``: {name: ms}; ``failures``: {name: why its launch could not be rebuilt}."""
    recorded = {f.name: f.recorded_ms for f in figures}
    rows = []
    for f in figures:
        row = {"figure": f.name, "group": f.group, "unit": f.unit,
               "recorded": f.value(f.recorded_ms)}
        if f.name in failures:
            row.update(retimed=None, difference_pct=None, within=False, problem=failures[f.name])
        else:
            new = f.value(retimed_ms[f.name])
            diff = 100 * (new / row["recorded"] - 1)
            row.update(retimed=new, difference_pct=diff, within=abs(diff) <= TOLERANCE_PCT)
        if f.versus:
            row["ratio_recorded_pct"], row["versus_recorded"] = _ratio(f, recorded, f.recorded_ms)
            row["ratio_retimed_pct"], row["versus_retimed"] = _ratio(
                f, retimed_ms, retimed_ms.get(f.name))
        rows.append(row)
    return rows


def _num(value, digits=1):
    return "" if value is None else f"{value:,.{digits}f}"


def table(rows):
    """The markdown table of :func:`compare`'s rows."""
    lines = [f"| figure | unit | record | re-timed | difference % | within {TOLERANCE_PCT:g}% | "
             "% of library, record | % of library, re-timed |",
             "|---|---|---:|---:|---:|---|---:|---:|"]
    for r in rows:
        retimed = _num(r["retimed"]) if r["retimed"] is not None else \
            f"not rebuilt: {r['problem']}"
        ratios = [f"{_num(r.get(k))} ({r[v]})" if r.get(k) is not None else ""
                  for k, v in (("ratio_recorded_pct", "versus_recorded"),
                               ("ratio_retimed_pct", "versus_retimed"))]
        lines.append(f"| {r['figure']} | {r['unit']} | {_num(r['recorded'])} | {retimed} | "
                     f"{_num(r['difference_pct'])} | {'yes' if r['within'] else '**no**'} | "
                     f"{ratios[0]} | {ratios[1]} |")
    return "\n".join(lines) + "\n"


def clocks_table(clocks):
    """Markdown: the SM clock the record sampled beside each group, and the re-timing's."""
    def text(c):
        if not c or "sm_mhz_mean" not in c:
            return (c or {}).get("unavailable", "")
        return (f"{c['sm_mhz_mean']:.0f} MHz (min {c['sm_mhz_min']:.0f}), "
                f"{', '.join(c['clock_event_reasons'])}")
    lines = ["| group | record: SM clock, reasons | re-timed |", "|---|---|---|"]
    lines += [f"| {group} | {text(c.get('record'))} | {text(c.get('retimed'))} |"
              for group, c in clocks.items()]
    return "\n".join(lines) + "\n"


def report(path, record, machine, rows, clocks, rounds):
    """The JSON and markdown of a re-timing: (json text, markdown text)."""
    made = record.get("machine", {})
    outside = [r["figure"] for r in rows if not r["within"]]
    data = {"record": str(path), "record_machine": {k: made.get(k) for k in (
                "gpu", "driver", "date", "cuda_runtime")},
            "machine": machine, "timer": "triton.testing.do_bench(launch, return_mode='median'), "
            f"{rounds} round-robin rounds per group, median of the rounds; host costs on the "
            "host clock", "tolerance_pct": TOLERANCE_PCT, "rounds": rounds,
            "outside_tolerance": outside, "figures": rows, "clocks": clocks}
    versions = ", ".join(f"{k} {v}" for k, v in machine.get("versions", {}).items())
    md = (f"# {Path(path).name} re-timed with Triton's do_bench\n\n"
          f"Record made on {made.get('gpu')} (driver {made.get('driver')}, {made.get('date')}); "
          f"re-timed on {machine.get('gpu')} (driver {machine.get('driver')}, "
          f"{machine.get('date')}; {versions}). {data['timer']}. Difference: re-timed against "
          f"the record, in % of the record's value.\n\n" + table(rows))
    if any(c.get("record") or c.get("retimed") for c in clocks.values()):
        md += "\n" + clocks_table(clocks)
    md += ("\nAll within " if not outside else f"\n{len(outside)} outside ") + \
        f"{TOLERANCE_PCT:g}%" + (": " + "; ".join(outside) if outside else "") + ".\n"
    return json.dumps(data, indent=1), md


def _read_record(path):
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SystemExit(f"{path}: no such record") from None
    except json.JSONDecodeError as err:
        raise SystemExit(f"{path} is not a JSON record: {err}") from None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("record", help="a record of library_gpu.py, gemm_host.py or attention_gpu.py")
    ap.add_argument("--out", help="the folder the JSON and markdown go to")
    ap.add_argument("--only", action="append", default=[], metavar="TEXT",
                    help="time the figures whose name holds TEXT (repeatable)")
    ap.add_argument("--all", action="store_true", help="time every figure of the record")
    ap.add_argument("--rounds", type=int, default=ROUNDS)
    ap.add_argument("--list", action="store_true", help="list the figures; time nothing")
    args = ap.parse_args(argv)
    if args.rounds < 1:
        ap.error(f"--rounds must be at least 1, got {args.rounds}")
    record = _read_record(args.record)
    try:
        figures = select(read_figures(record), args.only, args.all)
    except ValueError as err:
        raise SystemExit(f"{args.record}: {err}") from None
    except KeyError as err:
        raise SystemExit(f"{args.record}: a row of the record has no {err} (not the layout "
                         "of the script that makes such records)") from None
    if args.list:
        stale = stale_plans(figures, record.get("machine", {}).get("sm_count", 132))
        for f in figures:
            now = f" (the record's plan; now: {stale[f.name]})" if f.name in stale else ""
            print(f"{f.name:<70} {f.value(f.recorded_ms):>10.1f} {f.unit}{now}")
        print(f"{len(figures)} figures; about {estimated_seconds(figures, args.rounds):.0f} s of "
              f"timing in {args.rounds} rounds, plus building the launches; {len(stale)} with a "
              "plan the same stage and options no longer give (reported, not timed)")
        return 0
    if not args.out:
        ap.error("--out FOLDER is needed to time (or --list)")
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import retime_launches
    try:
        check_same_gpu(record, retime_launches.current_gpu())
    except WrongGPU as err:
        print(f"{args.record}: {err}", file=sys.stderr)
        return 2
    retimed, failures, clocks = retime_launches.retime(
        figures, args.rounds, {f.name: rep_ms(f) for f in figures})
    clocks = {group: {"record": next((f.clocks for f in figures if f.group == group), None),
                      "retimed": c} for group, c in clocks.items()}
    rows = compare(figures, retimed, failures)
    text, md = report(args.record, record, retime_launches.machine(), rows, clocks, args.rounds)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = f"retime_{Path(args.record).stem}"
    (out / f"{stem}.json").write_text(text, encoding="utf-8")
    (out / f"{stem}.md").write_text(md, encoding="utf-8")
    print(md)
    outside = [r["figure"] for r in rows if not r["within"]]
    if outside:
        print(f"outside {TOLERANCE_PCT:g}% (or not rebuilt): {outside}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
