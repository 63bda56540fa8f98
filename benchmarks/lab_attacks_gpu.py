"""Every kernel lab's reference kernel and each attack of issue 35 on a real GPU, beside the
simulator's verdict: does the simulator fail what the GPU gets wrong, and is it at least as strict
as compute-sanitizer?

For each kernel (the reference of every puzzle and GEMM lab from ``solutions/``, and the attacks
of ``tests/test_labs_simulator_attacks.py``):

- the simulator's verdict: ``check()`` in a child process on the simulator backend;
- the GPU's output on the lab's public cases, in two launch orders: right after a kernel that
  leaves zeros in every SM's shared memory, and right after one that leaves NaN there, with the
  output array poisoned as the lab poisons it; each result is compared with the float64
  reference under the lab's own elementwise bound;
- compute-sanitizer's memcheck, racecheck and initcheck, each on one launch (case 1) in a child.

    GEMMLAB_BACKEND=gpu python benchmarks/lab_attacks_gpu.py --out benchmarks/lab_attacks_h200.json
"""
import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
LABS = ("03.puzzle_map", "03.puzzle_zip", "03.puzzle_map2d", "03.puzzle_broadcast",
        "03.puzzle_shared", "03.puzzle_pool", "03.puzzle_dot", "03.puzzle_prefix",
        "05.lab_naive", "05.lab_tiled", "08.lab_pingpong", "10.lab_outer", "11.lab_twolevel")
TOOLS = ("memcheck", "racecheck", "initcheck")
PREAMBLE = "from numba import cuda, float32\nimport math\n"


def kernels():
    """[(label, question, source, name)]: the references, then the attacks."""
    from gemmlab.labs.solutions import cell
    found = [(f"reference {qid}", qid, *cell(qid)[:2]) for qid in LABS]
    spec = importlib.util.spec_from_file_location(
        "attacks", ROOT / "tests" / "test_labs_simulator_attacks.py")
    attacks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(attacks)
    return found + [(f"attack: {label}", qid, source, name)
                    for label, qid, source, name, _ in attacks.ATTACKS]


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


def gpu_outcome(kernel, lab, before):
    """What the GPU computed on each public case: wrong elements (beyond the lab's bound, NaN
    included) and the largest error."""
    rows = []
    for case in lab.cases():
        name, reference, bound = expected(lab, case)
        out = run_on_gpu(kernel, lab, case, before)[name].astype(np.float64)
        error = np.abs(out - reference)
        wrong = ~(error <= bound)
        rows.append(dict(case=case.label, wrong=int(wrong.sum()), of=int(wrong.size),
                         nan=int(np.isnan(out).sum()),
                         max_error=float(np.nanmax(error)) if np.isfinite(error).any() else None))
    return rows


def child(argv, backend):
    env = dict(os.environ, GEMMLAB_BACKEND=backend)
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=400, cwd=ROOT)
    return done.returncode, done.stdout + done.stderr


def verdict(index):
    """The simulator's verdict through check(), as a student's notebook gets it (child, sim)."""
    code, text = child([sys.executable, __file__, "--verdict", str(index)], "sim")
    match = re.search(r"^VERDICT (.*)$", text, re.M)
    return json.loads(match.group(1)) if match else dict(status="error", feedback=text[-800:])


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
    row = dict(kernel=label, question=qid, simulator=verdict(index))
    try:
        kernel = load(source, name)
        row["gpu"] = {before: gpu_outcome(kernel, lab, before) for before in ("zeros", "NaN")}
    except Exception as exc:                            # a kernel the GPU refuses to load
        row["gpu"] = dict(refused=f"{type(exc).__name__}: {str(exc)[:300]}")
    row["sanitizer"] = {tool: sanitized(index, tool) for tool in TOOLS}
    gpu_wrong = ("refused" in row["gpu"] or
                 any(r["wrong"] for rows in row["gpu"].values() for r in rows))
    tools_flag = any((t["errors"] or 0) or (t["hazards"] or 0) for t in row["sanitizer"].values())
    row["gpu_wrong"], row["tools_flag"] = gpu_wrong, tools_flag
    row["simulator_fails"] = row["simulator"]["status"] == "fail"
    row["at_least_as_strict"] = row["simulator_fails"] or not (gpu_wrong or tools_flag)
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="benchmarks/lab_attacks_h200.json")
    parser.add_argument("--verdict", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--launch", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    found = kernels()
    if args.verdict is not None:
        from gemmlab.grading import check
        from gemmlab.judging import load_function
        _, qid, source, name = found[args.verdict]
        result = check(qid, load_function(source, name, f"/attack/{name}.py"))
        print("VERDICT " + json.dumps(dict(status=result.status, feedback=result.feedback)))
        return 0
    if args.launch is not None:
        _, qid, source, name = found[args.launch]
        lab = lab_of(qid)
        run_on_gpu(load(source, name), lab, lab.cases()[0], "NaN")
        print("LAUNCHED")
        return 0
    import gemmlab as gl
    if gl.device.backend() != "gpu":
        print("lab_attacks_gpu.py needs a GPU (GEMMLAB_BACKEND=gpu)", file=sys.stderr)
        return 2
    with ThreadPoolExecutor(4) as pool:
        rows = list(pool.map(lambda i: one(i, found), range(len(found))))
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump({"machine": gl.bench.machine(), "kernels": rows}, f, indent=1)
    print(f"wrote {args.out}\n")
    print("| kernel | simulator | GPU wrong (zeros / NaN before) | memcheck | racecheck | initcheck |")
    print("|---|---|---|---:|---:|---:|")
    for r in rows:
        gpu = r["gpu"]
        wrong = ("refused to load" if "refused" in gpu else " / ".join(
            str(sum(c["wrong"] for c in gpu[b])) for b in ("zeros", "NaN")))
        tools = [r["sanitizer"][t] for t in TOOLS]
        cells = [f"{t['errors']}" + (f" ({t['hazards']} hazards)" if t["hazards"] else "")
                 for t in tools]
        print(f"| {r['kernel']} | {r['simulator']['status']} | {wrong} | " + " | ".join(cells)
              + " |")
    strict = all(r["at_least_as_strict"] for r in rows)
    print(f"\nsimulator at least as strict as the GPU and the tools on every kernel: {strict}")
    return 0 if strict else 1


if __name__ == "__main__":
    sys.exit(main())
