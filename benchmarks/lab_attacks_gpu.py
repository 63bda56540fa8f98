"""Every kernel lab's reference kernel and each kernel attack of issues 35 and 54 on a real GPU,
beside the simulator: does the simulator compute what the GPU computes, does it fail what the GPU
gets wrong, and is it at least as strict as compute-sanitizer?

For each kernel (the reference of every puzzle and GEMM lab from ``solutions/``, the attacks of
``tests/test_labs_simulator_attacks.py``, and issue 54's kernel attacks where their tests keep
them: ``test_labs_gpu_numbers.py``, ``test_labs_puzzles.py``, ``test_labs_kernel_lab.py``):

- the simulator's side, in a child process on the simulator backend: the verdict of ``check()``,
  and the output array of each public case, run as the judge runs a kernel cell (its kernel part
  loaded alone, the judge's schedule for that case, its numbers in numba's types as
  :mod:`gemmlab.labs.gpu_numbers` computes them);
- the GPU's output on the lab's public cases, in two launch orders: right after a kernel that
  leaves zeros in every SM's shared memory, and right after one that leaves NaN there, with the
  output array poisoned as the lab poisons it; each result is compared with the float64
  reference under the lab's own elementwise bound, and with the simulator's output under it;
- compute-sanitizer's memcheck, racecheck and initcheck, each on one launch (case 1) in a child.

A kernel's row *agrees* when the simulator and the GPU call the same public cases right and the
same wrong (in both launch orders), or when the GPU gets it wrong or refuses it and the
simulator's verdict fails it (a race whose schedule happened to be right on the simulator). A
kernel the simulator fails for a proxy (reads per FMA, an atomic chain) while its values are
right on both sides agrees: its verdict column names the proxy.

    GEMMLAB_BACKEND=gpu python benchmarks/lab_attacks_gpu.py --out DIR

writes ``DIR/lab_attacks_<gpu>.json`` and the summary table ``DIR/lab_attacks_<gpu>.md``
(``<gpu>``: h100, h200, ...) and prints the table.
"""
import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
LABS = ("03.puzzle_map", "03.puzzle_zip", "03.puzzle_map2d", "03.puzzle_broadcast",
        "03.puzzle_shared", "03.puzzle_pool", "03.puzzle_dot", "03.puzzle_prefix",
        "05.lab_naive", "05.lab_tiled", "08.lab_pingpong", "10.lab_outer", "11.lab_twolevel")
TOOLS = ("memcheck", "racecheck", "initcheck")
PREAMBLE = "from numba import cuda, float32\nimport math\n"


def tests_file(name):
    """The test file ``tests/<name>.py`` as a module: an attack's source has one home, its test."""
    spec = importlib.util.spec_from_file_location(name, TESTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def kernels():
    """[(label, question, source, name)]: the references, the attacks of issue 35, then those of
    issue 54 (a branch int64 takes and Python's integers do not, one float64 takes and NumPy's float32 does
    not, atomics on one address, no
    register blocking)."""
    from gemmlab.labs.solutions import cell
    if str(TESTS) not in sys.path:
        sys.path.insert(0, str(TESTS))          # the test files import their helpers from there
    from solution_variants import edited
    found = [(f"reference {qid}", qid, *cell(qid)[:2]) for qid in LABS]
    found += [(f"attack: {label}", qid, source, name)
              for label, qid, source, name, _ in tests_file("test_labs_simulator_attacks").ATTACKS]
    return found + [
        ("attack: a branch taken in int64 only (K * 2**64 == 0)", "05.lab_naive",
         *tests_file("test_labs_gpu_numbers").naive_attack()),
        ("attack: a branch taken in float64 only (acc + 1e-12 == acc)", "05.lab_naive",
         *tests_file("test_labs_gpu_numbers").float64_attack()),
        ("attack: every thread's atomic add on one shared slot", "03.puzzle_dot",
         *edited("03.puzzle_dot", *tests_file("test_labs_puzzles").ATOMICS_ON_ONE_SLOT)[:2]),
        ("attack: no register blocking", "10.lab_outer",
         *edited("10.lab_outer", tests_file("test_labs_kernel_lab").NO_REGISTER_BLOCKING)[:2])]


def lab_of(qid):
    from gemmlab.grading.bank import get_question
    return get_question(qid).kind


def load(source, name):
    namespace = {}
    exec(compile(PREAMBLE + source, f"<{name}>", "exec"), namespace)    # noqa: S102 (our kernels)
    return namespace[name]


def expected(lab, case):
    """(output's name, float64 reference, elementwise bound)."""
    if hasattr(case, "expected"):
        return lab.output, case.expected, case.tolerance
    return "C", case.reference(), case.tolerance()


def beyond(x, y, bound):
    """Where ``x`` and ``y`` differ beyond the elementwise ``bound``: NaN on one side counts, NaN
    on both does not (an element neither wrote keeps the same poison)."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    return ~(np.abs(x - y) <= bound) & ~(np.isnan(x) & np.isnan(y))


def _fill_shared(value):
    from numba import cuda, float32

    @cuda.jit
    def fill(out):
        s = cuda.shared.array(12288, float32)            # 48 KiB, every block's static limit
        for i in range(cuda.threadIdx.x, 12288, cuda.blockDim.x):
            s[i] = value
        cuda.syncthreads()
        if cuda.threadIdx.x == 0:
            out[cuda.blockIdx.x] = s[0]
    return fill


def run_on_gpu(kernel, lab, case, before):
    """The output after one launch on ``case``, ``before`` ("zeros"/"NaN") having been left in
    shared memory by a kernel run on every SM just before it."""
    from numba import cuda
    fill = _fill_shared(0.0 if before == "zeros" else float("nan"))
    sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
    fill[8 * sms, 256](cuda.device_array(8 * sms, np.float32))
    arrays = {name: cuda.to_device(value) for name, value in lab.arrays(case).items()}
    grid, block = lab.launch_of(case)
    kernel[grid, block](*arrays.values())
    cuda.synchronize()
    return {name: value.copy_to_host() for name, value in arrays.items()}


def gpu_outcome(kernel, lab, before, simulated):
    """What the GPU computed on each public case: wrong elements (beyond the lab's bound, NaN
    included), the largest error, and the elements where it differs from the simulator's output
    of that case beyond the bound (``simulated``: case number -> array; None where it has none)."""
    rows = []
    for number, case in enumerate(lab.cases()):
        name, reference, bound = expected(lab, case)
        out = run_on_gpu(kernel, lab, case, before)[name].astype(np.float64)
        error = np.abs(out - reference)
        wrong = beyond(out, reference, bound)
        sim = simulated.get(number)
        rows.append(dict(case=case.label, wrong=int(wrong.sum()), of=int(wrong.size),
                         nan=int(np.isnan(out).sum()),
                         max_error=float(np.nanmax(error)) if np.isfinite(error).any() else None,
                         differ=None if sim is None else int(beyond(out, sim, bound).sum())))
    return rows


def child(argv, backend):
    env = dict(os.environ, GEMMLAB_BACKEND=backend)
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=400, cwd=ROOT)
    return done.returncode, done.stdout + done.stderr


def simulator_side(index, found):
    """The simulator's side of kernel ``index`` of ``found``, from a child on the simulator
    backend (:func:`simulate_here`): (its verdict and what each public case's run gave, compared
    with the float64 reference under the lab's bound; case number -> the simulator's output)."""
    _, qid, _, _ = found[index]
    lab = lab_of(qid)
    with tempfile.TemporaryDirectory(prefix="lab-attacks-") as folder:
        path = Path(folder) / "outputs.npz"
        code, text = child([sys.executable, __file__, "--simulate", str(index), str(path)], "sim")
        match = re.search(r"^SIMULATED (.*)$", text, re.M)
        if not match:
            return dict(status="error", feedback=text[-800:], cases=[]), {}
        with np.load(path) as saved:
            outputs = {int(number): saved[number] for number in saved.files}
    said = json.loads(match.group(1))
    for number, (case, run) in enumerate(zip(lab.cases(), said["cases"], strict=True)):
        name, reference, bound = expected(lab, case)
        out = outputs.get(number)
        run.update(case=case.label, wrong=None if out is None else
                   int(beyond(out, reference, bound).sum()),
                   nan=None if out is None else int(np.isnan(out).sum()))
    return said, outputs


def simulate_here(qid, source, name):
    """Child on the simulator backend: (the verdict of ``check()`` as a student's notebook gets
    it, with what each public case's run said: its fault, its first int64 wrap, or the error it
    raised; the output array of each case, by its number as a string) where each case runs as the
    judge runs a kernel cell: the cell's kernel part loaded alone, the judge's schedule for that
    case, the simulator's int64 integers."""
    from gemmlab.grading import check
    from gemmlab.grading.bank import get_question
    from gemmlab.judging import load_function
    from gemmlab.judging.cell import prepared
    from gemmlab.judging.worker import CELL_FILE
    from gemmlab.labs.kernel_lab import schedule_of
    result = check(qid, load_function(source, name, f"/attack/{name}.py"))
    question = get_question(qid)
    lab = question.kind
    kept, problem = prepared(question, source, name)
    kernel = load_function(kept, name, CELL_FILE) if not problem else None
    outputs, runs = {}, []
    for number, case in enumerate(lab.cases()):
        if problem:
            runs.append(dict(error=problem))
            continue
        try:
            arrays, trace = lab.run_case(kernel, case, schedule=schedule_of(number))
        except Exception as exc:                # the run itself refused: said, no output
            runs.append(dict(error=f"{type(exc).__name__}: {str(exc)[:300]}"))
            continue
        outputs[str(number)] = arrays[expected(lab, case)[0]]
        runs.append(dict(fault=None if trace.fault is None else str(trace.fault)[:300],
                         wrapped=trace.wrapped))
    return dict(status=result.status, feedback=result.feedback, cases=runs), outputs


def sanitized(index, tool):
    """compute-sanitizer ``tool``'s error count on one launch of kernel ``index`` (case 1)."""
    sanitizer = shutil.which("compute-sanitizer") or "/usr/local/cuda/bin/compute-sanitizer"
    argv = [sanitizer, "--tool", tool, "--report-api-errors", "no", sys.executable, __file__,
            "--launch", str(index)]
    if tool == "racecheck":
        argv[3:3] = ["--racecheck-report", "all"]
    code, text = child(argv, "gpu")
    # memcheck and initcheck end "ERROR SUMMARY: N errors"; racecheck ends
    # "RACECHECK SUMMARY: N hazards displayed (E errors, W warnings)"
    summary = (re.search(r"ERROR SUMMARY: (\d+) error", text)
               or re.search(r"RACECHECK SUMMARY: \d+ hazards? displayed \((\d+) error", text))
    hazards = re.search(r"RACECHECK SUMMARY: (\d+) hazard", text)
    return dict(errors=int(summary.group(1)) if summary else None,
                hazards=int(hazards.group(1)) if hazards else None,
                launched="LAUNCHED" in text, exit=code,
                first=next((line.strip() for line in text.splitlines()
                            if re.search(r"Invalid|Race|Uninitialized|hazard", line)), ""))


def one(index, found):
    label, qid, source, name = found[index]
    lab = lab_of(qid)
    simulator, simulated = simulator_side(index, found)
    row = dict(kernel=label, question=qid, simulator=simulator)
    try:
        kernel = load(source, name)
        row["gpu"] = {before: gpu_outcome(kernel, lab, before, simulated)
                      for before in ("zeros", "NaN")}
    except Exception as exc:                            # a kernel the GPU refuses to load
        row["gpu"] = dict(refused=f"{type(exc).__name__}: {str(exc)[:300]}")
    row["sanitizer"] = {tool: sanitized(index, tool) for tool in TOOLS}
    gpu_wrong = ("refused" in row["gpu"] or
                 any(r["wrong"] for rows in row["gpu"].values() for r in rows))
    tools_flag = any((t["errors"] or 0) or (t["hazards"] or 0) for t in row["sanitizer"].values())
    row["gpu_wrong"], row["tools_flag"] = gpu_wrong, tools_flag
    row["simulator_fails"] = row["simulator"]["status"] == "fail"
    row["at_least_as_strict"] = row["simulator_fails"] or not (gpu_wrong or tools_flag)
    row["values_agree"] = values_agree(row)
    row["agrees"] = row["values_agree"] or (gpu_wrong and row["simulator_fails"])
    return row


def values_agree(row):
    """Whether the simulator and the GPU (after zeros and after NaN) call each public case right
    or wrong alike; never where a side has no output for a case."""
    cases = row["simulator"]["cases"]
    if "refused" in row["gpu"] or any(c.get("wrong") is None for c in cases):
        return False
    return all(len(rows) == len(cases) and all((r["wrong"] == 0) == (c["wrong"] == 0)
                                               for r, c in zip(rows, cases, strict=True))
               for rows in row["gpu"].values())


def verdict_cell(simulator, width=110):
    """'fail: ' and the feedback's first line, cut to ``width``, then the int64 wrap its note
    names (the note comes last, after the case's numbers), fit for a markdown cell."""
    text = simulator["feedback"].strip()
    line = text.splitlines()[0] if text else ""
    line = line if len(line) <= width else line[:width - 3].rstrip() + "..."
    note = re.search(r"Note: (line \d+ .*? in int64)", text)
    cell = f"{simulator['status']}: {line}" + (f" Note: {note.group(1)}" if note else "")
    return cell.replace("|", "\\|")


def table(rows, machine):
    """The summary table (markdown): one row per kernel, under the machine it ran on."""
    def totals(key, r):
        if "refused" in r["gpu"]:
            return "refused to load"
        counts = [[c[key] for c in r["gpu"][b]] for b in ("zeros", "NaN")]
        return " / ".join("-" if None in c else str(sum(c)) for c in counts)

    def agrees(r):
        if r["values_agree"]:
            return "yes"
        return "yes: fails what the GPU gets wrong" if r["agrees"] else "**no**"

    def tool(t):
        if not t["launched"] and t["errors"] is None:
            return "not launched"
        return f"{t['errors']}" + (f" ({t['hazards']} hazards)" if t["hazards"] else "")

    lines = [f"{machine.get('gpu')}, driver {machine.get('driver')}, CUDA "
             f"{machine.get('cuda_runtime')}, numba-cuda {machine.get('numba-cuda')}, "
             f"{machine.get('date')}", "",
             "| kernel | simulator verdict | GPU wrong (zeros / NaN before) | simulator vs GPU "
             "differing (zeros / NaN before) | agrees | memcheck | racecheck | initcheck |",
             "|---|---|---|---|---|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['kernel']} | {verdict_cell(r['simulator'])} | {totals('wrong', r)} | "
                     f"{totals('differ', r)} | {agrees(r)} | "
                     + " | ".join(tool(r["sanitizer"][t]) for t in TOOLS) + " |")
    agreeing = sum(r["agrees"] for r in rows)
    strict = all(r["at_least_as_strict"] for r in rows)
    lines += ["", f"rows that agree: {agreeing} of {len(rows)}; simulator at least as strict as "
                  f"the GPU and the tools on every kernel: {strict}"]
    return "\n".join(lines) + "\n"


def record_name(machine):
    """'lab_attacks_h100' for an H100 (the GPU's model, lower case), else 'lab_attacks_gpu'."""
    model = re.search(r"\b([A-Z]{1,2}\d{2,4})\b", str(machine.get("gpu") or ""))
    return f"lab_attacks_{model.group(1).lower() if model else 'gpu'}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--out", default="benchmarks", type=Path,
                        help="folder for lab_attacks_<gpu>.json and .md (default: benchmarks)")
    parser.add_argument("--simulate", nargs=2, metavar=("INDEX", "NPZ"), help=argparse.SUPPRESS)
    parser.add_argument("--launch", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    if args.simulate is None and args.launch is None:
        from gemmlab import device
        if device.backend() != "gpu":
            print(f"lab_attacks_gpu.py runs every kernel on a GPU, and this process runs on the "
                  f"{device.backend()!r} backend: run it with GEMMLAB_BACKEND=gpu on a machine "
                  f"with an NVIDIA GPU", file=sys.stderr)
            return 2
    found = kernels()
    if args.simulate is not None:
        index, path = int(args.simulate[0]), args.simulate[1]
        said, outputs = simulate_here(*found[index][1:])
        np.savez(path, **outputs)
        print("SIMULATED " + json.dumps(said))
        return 0
    if args.launch is not None:
        _, qid, source, name = found[args.launch]
        lab = lab_of(qid)
        run_on_gpu(load(source, name), lab, lab.cases()[0], "NaN")
        print("LAUNCHED")
        return 0
    import gemmlab as gl
    started = time.monotonic()
    # each kernel's children (one on the simulator, three under compute-sanitizer) run one after
    # another; half the cores run kernels side by side
    with ThreadPoolExecutor(max(4, (os.cpu_count() or 8) // 2)) as pool:
        rows = list(pool.map(lambda i: one(i, found), range(len(found))))
    machine = gl.bench.machine()
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"{record_name(machine)}.json"
    summary = table(rows, machine)
    path.write_text(json.dumps({"machine": machine, "seconds": round(time.monotonic() - started),
                                "kernels": rows}, indent=1), encoding="utf-8")
    path.with_suffix(".md").write_text(summary, encoding="utf-8")
    print(f"wrote {path} and {path.with_suffix('.md').name}\n\n{summary}")
    return 0 if all(r["at_least_as_strict"] and r["agrees"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
