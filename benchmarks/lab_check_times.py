"""Seconds a kernel lab's or puzzle's ``check()`` takes on this machine, compile step included:
each lab checked with the reference kernel from ``solutions/``, as a student's notebook calls it.

    GEMMLAB_BACKEND=sim python benchmarks/lab_check_times.py [--out FILE.json]

Each lab is checked twice: the first check compiles (a compiler child), the second finds the
compile in the cache (``compiles`` says how many compiler children each started). Writes the
figures with the machine, its load average before and after, and the date. Issue 36 asks, on a
quiet 2-core machine: a puzzle within 2 s, a GEMM lab within 4 s, a second check within 1 s.
"""
import argparse
import json
import os
import sys
import time

import gemmlab as gl
from gemmlab import measure
from gemmlab.grading.checker import check
from gemmlab.labs import compile as compile_
from gemmlab.labs import solutions

PUZZLES = [f"03.puzzle_{p}" for p in ("map", "zip", "map2d", "broadcast", "shared", "pool", "dot",
                                      "prefix")]
LABS = ["05.lab_naive", "05.lab_tiled", "08.lab_pingpong", "10.lab_outer", "11.lab_twolevel"]


def time_check(question_id, kernel):
    """(status, seconds, compiler children started) of one check() of ``kernel``."""
    compiles, start = compile_.COMPILES["count"], time.perf_counter()
    result = check(question_id, kernel)
    return result.status, time.perf_counter() - start, compile_.COMPILES["count"] - compiles


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="where to write the JSON record (default: print only)")
    args = parser.parse_args(argv)
    record = {"machine": measure.machine(), "load_before": os.getloadavg(), "checks": {}}
    for question_id in PUZZLES + LABS:
        kernel = solutions.solution(question_id)
        status, seconds, compiles = time_check(question_id, kernel)
        again, second, recompiles = time_check(question_id, kernel)
        record["checks"][question_id] = {"status": status, "seconds": round(seconds, 2),
                                         "compiles": compiles, "second_status": again,
                                         "second_seconds": round(second, 2),
                                         "second_compiles": recompiles}
        print(f"{question_id:22s} {status:5s} {seconds:6.1f} s ({compiles} compile); again "
              f"{second:5.1f} s ({recompiles} compile)", flush=True)
    record["load_after"] = os.getloadavg()
    if args.out:
        with open(args.out, "w") as f:
            json.dump(record, f, indent=1, default=str)
    failed = [q for q, r in record["checks"].items() if r["status"] != "pass"]
    if failed:
        print("not passed:", ", ".join(failed), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    assert gl.device.backend() == "sim", "run it with GEMMLAB_BACKEND=sim: it times the simulator"
    sys.exit(main())
