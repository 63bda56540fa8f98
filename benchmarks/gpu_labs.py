"""Every kernel lab's check on a GPU, with the reference kernels of the solutions notebooks.

On a GPU backend a lab check runs its instrumented checks in a subprocess on the simulator, then
times the kernel at full size (``gl.device.sizes()["gemm_n"]``, 4096 on a GPU) beside the
course's kernel and cuBLAS. This script runs those checks, prints what each one says, and
records the figures with the machine in a JSON file (and a Markdown table for RESULTS.md).

    GEMMLAB_BACKEND=gpu python benchmarks/gpu_labs.py --out benchmarks/gpu_labs.json
"""
import argparse
import json
import os
import sys
import tempfile
import time

QUESTIONS = ("05.lab_naive", "05.lab_tiled", "08.lab_pingpong", "10.lab_outer",
             "11.lab_twolevel", "12.lab_wmma")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="benchmarks/gpu_labs.json")
    args = parser.parse_args(argv)
    # Keep the figures out of the user's own ladder (~/.cache/gemmlab/my_ladder.json).
    os.environ["GEMMLAB_LADDER"] = os.path.join(tempfile.mkdtemp(prefix="gemmlab-labs-"),
                                                "ladder.json")
    import gemmlab as gl
    from gemmlab.grading import check
    from gemmlab.labs import my_ladder as ladder, solutions
    if gl.device.backend() != "gpu":
        print("gpu_labs.py needs a GPU (GEMMLAB_BACKEND=gpu)", file=sys.stderr)
        return 2
    rows = []
    for qid in QUESTIONS:
        start = time.perf_counter()
        result = check(qid, solutions.solution(qid))
        lab = gl.grading.bank.get_question(qid).kind
        figures = ladder.load().get(getattr(lab, "name", None), {})
        rows.append(dict(question=qid, status=result.status, feedback=result.feedback,
                         seconds=round(time.perf_counter() - start, 1), **figures))
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump({"machine": gl.bench.machine(), "labs": rows}, f, indent=1)
    print(f"wrote {args.out}\n")
    print("| lab | status | TFLOP/s | course's kernel | its TFLOP/s | cuBLAS TFLOP/s | check, s |")
    print("|---|---|---:|---|---:|---:|---:|")
    for r in rows:
        timed = "tflops" in r
        print(f"| {r['question']} | {r['status']} | {r['tflops']:.2f} | {r['course']} "
              f"{r['course_tiles']} | {r['course_tflops']:.2f} | {r['cublas_tflops'] or '-'} | "
              f"{r['seconds']} |" if timed else
              f"| {r['question']} | {r['status']} | - | - | - | - | {r['seconds']} |")
    return 0 if all(r["status"] == "pass" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
