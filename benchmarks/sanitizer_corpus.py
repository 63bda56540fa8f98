"""The race corpus (tests/simulator_corpus/) on a real GPU: each kernel under compute-sanitizer's
racecheck, initcheck, memcheck and synccheck, and its plain output against the reference and
between runs. Writes benchmarks/sanitizer_corpus.json (the table in RESULTS.md).

    python benchmarks/sanitizer_corpus.py record --out sanitizer_corpus.json   # on the GPU
    python benchmarks/sanitizer_corpus.py one k01_shared_raw_no_barrier        # one kernel
    GEMMLAB_BACKEND=sim python benchmarks/sanitizer_corpus.py simulator        # add the
        # instrumented simulator's first report of each kernel (forward order) to the record

Every (kernel, tool) pair runs in a process of its own (a kernel that hangs or corrupts memory
spoils no other row), several at a time, each with a time limit.
"""
import argparse
import concurrent.futures
import datetime
import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "simulator_corpus"
TOOLS = ("racecheck", "initcheck", "memcheck", "synccheck")
RUNS = 5                # plain runs of each kernel, compared with each other
LIMIT = 60              # seconds for one process


def load(stem):
    spec = importlib.util.spec_from_file_location(stem, CORPUS / f"{stem}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_one(stem, runs):
    """Launch the kernel ``runs`` times on fresh inputs; print a JSON line of what it gave."""
    import numpy as np
    from numba import cuda
    case = load(stem)
    grid, block, shared = case.LAUNCH
    outputs = []
    for _ in range(runs):
        args = case.inputs()
        case.kernel[grid, block, 0, shared](*args.values())
        cuda.synchronize()
        outputs.append(np.asarray(args["out"]).copy())
    reference = case.reference(case.inputs())
    print("RESULT " + json.dumps({
        "differs_from_reference": any(not np.allclose(o, reference, rtol=1e-5) for o in outputs),
        "differs_between_runs": any(not np.array_equal(o, outputs[0]) for o in outputs[1:]),
        "outputs": [o.reshape(-1)[:8].tolist() for o in outputs[:2]]}), flush=True)


def sanitizer():
    return shutil.which("compute-sanitizer") or "/usr/local/cuda/bin/compute-sanitizer"


def run_tool(stem, tool):
    """One kernel under one tool: errors reported, the first report line, and how it ended."""
    command = [sanitizer(), "--tool", tool, "--print-limit", "20"]
    if tool == "racecheck":
        command += ["--racecheck-report", "all"]
    command += [sys.executable, __file__, "one", stem, "--runs", "1"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=LIMIT)
    except subprocess.TimeoutExpired:
        return {"errors": None, "ended": "timeout", "first": ""}
    text = done.stdout + done.stderr
    summary = re.search(r"ERROR SUMMARY: (\d+) error", text)
    hazards = re.search(r"RACECHECK SUMMARY: (\d+) hazard", text)
    first = next((line.strip("= ").strip() for line in text.splitlines()
                  if line.startswith("=========") and re.search(
                      r"(Error|Hazard|hazard|Race|Barrier|Invalid|Uninitialized|divergent)",
                      line)), "")
    errors = int(summary.group(1)) if summary else None
    if hazards:
        errors = max(errors or 0, int(hazards.group(1)))
    return {"errors": errors, "ended": "ok" if "RESULT " in text else f"exit {done.returncode}",
            "first": first[:300]}


def run_plain(stem):
    try:
        done = subprocess.run([sys.executable, __file__, "one", stem, "--runs", str(RUNS)],
                              capture_output=True, text=True, timeout=LIMIT)
    except subprocess.TimeoutExpired:
        return {"ended": "timeout"}
    line = next((x for x in done.stdout.splitlines() if x.startswith("RESULT ")), None)
    if line is None:
        return {"ended": f"exit {done.returncode}", "error": done.stderr[-500:]}
    return dict(json.loads(line[len("RESULT "):]), ended="ok")


def machine():
    from numba import cuda
    import numba_cuda
    query = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                           capture_output=True, text=True).stdout.strip().split(", ")
    version = subprocess.run([sanitizer(), "--version"], capture_output=True, text=True).stdout
    return {"gpu": query[0], "driver": query[1],
            "cuda": ".".join(map(str, cuda.runtime.get_version())),
            "compute_sanitizer": version.strip().splitlines()[-1] if version else "",
            "numba_cuda": numba_cuda.__version__, "python": sys.version.split()[0],
            "date": datetime.date.today().isoformat()}


def record(out, workers):
    stems = sorted(p.stem for p in CORPUS.glob("k[0-9][0-9]_*.py"))
    jobs = {}
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        for stem in stems:
            jobs[stem, "plain"] = pool.submit(run_plain, stem)
            for tool in TOOLS:
                jobs[stem, tool] = pool.submit(run_tool, stem, tool)
    rows = []
    for stem in stems:
        plain = jobs[stem, "plain"].result()
        tools = {tool: jobs[stem, tool].result() for tool in TOOLS}
        rows.append({"kernel": stem, "racy": load_expect(stem) is not None, "tools": tools,
                     "caught": any((t["errors"] or 0) > 0 for t in tools.values()),
                     "plain": plain,
                     "differs_from_reference": bool(plain.get("differs_from_reference", True)),
                     "differs_between_runs": bool(plain.get("differs_between_runs", False))})
    data = {"machine": machine(), "tools": list(TOOLS), "runs": RUNS, "kernels": rows}
    Path(out).write_text(json.dumps(data, indent=1) + "\n")
    print(json.dumps(data["machine"]))
    for row in rows:
        print(row["kernel"], "racy" if row["racy"] else "correct", "caught" if row["caught"]
              else "-", {t: row["tools"][t]["errors"] for t in TOOLS},
              "ref-diff" if row["differs_from_reference"] else "", "run-diff" if
              row["differs_between_runs"] else "")


def first_report(trace):
    """What the instrumented simulator says first about a run: the fault, the first race, or the
    first read of shared memory nobody wrote; '' when it says nothing."""
    if trace.fault is not None:
        return str(trace.fault)
    if trace.races:
        return trace.races[0].describe()
    if trace.uninitialized:
        name, index, who, block, line = trace.uninitialized[0]
        return f"{who} of {block} read {name}{list(index)} at {line}, which nobody wrote"
    return ""


def simulator_report(stem, order="forward"):
    """The instrumented simulator's first report on corpus kernel ``stem`` (sim backend)."""
    from gemmlab.labs.simulator import simulate
    case = load(stem)
    grid, block, shared = case.LAUNCH
    trace = simulate(case.kernel, grid, block, list(case.inputs().items()), schedule=order,
                     shared_bytes=shared, time_limit=30)
    return first_report(trace)


def add_simulator(path):
    data = json.loads(Path(path).read_text())
    for row in data["kernels"]:
        row["simulator"] = simulator_report(row["kernel"])
    Path(path).write_text(json.dumps(data, indent=1) + "\n")


def load_expect(stem):
    """The corpus file's EXPECT, read from its text (the GPU process needs no kernel here)."""
    text = (CORPUS / f"{stem}.py").read_text()
    found = re.search(r"^EXPECT = (.*)$", text, re.M)
    return None if found.group(1).strip() == "None" else found.group(1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    one = sub.add_parser("one")
    one.add_argument("stem")
    one.add_argument("--runs", type=int, default=1)
    rec = sub.add_parser("record")
    rec.add_argument("--out", default=str(Path(__file__).with_suffix(".json")))
    rec.add_argument("--workers", type=int, default=12)
    sim = sub.add_parser("simulator")
    sim.add_argument("--record", default=str(Path(__file__).with_suffix(".json")))
    args = parser.parse_args()
    if args.what == "one":
        run_one(args.stem, args.runs)
    elif args.what == "record":
        record(args.out, args.workers)
    else:
        import gemmlab  # noqa: F401  (chooses the backend before numba.cuda is imported)
        add_simulator(args.record)


if __name__ == "__main__":
    main()
