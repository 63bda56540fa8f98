"""Seconds a kernel lab's or puzzle's ``check()`` takes on this machine, compile step included:
each lab checked with the reference kernel from ``solutions/``, as a student's notebook calls it.

    GEMMLAB_BACKEND=sim python benchmarks/lab_check_times.py [--out FILE.json]

Writes the figures with the machine, its load average before and after, and the date. The issues
ask for a puzzle's check under 10 s and a lab's under 20 s on a 2-core machine.
"""
import argparse
import json
import os
import sys
import time

import gemmlab as gl
from gemmlab import measure
from gemmlab.grading.checker import check
from gemmlab.labs import solutions

PUZZLES = [f"03.puzzle_{p}" for p in ("map", "zip", "map2d", "broadcast", "shared", "pool", "dot",
                                      "prefix")]
LABS = ["05.lab_naive", "05.lab_tiled", "08.lab_pingpong", "10.lab_outer", "11.lab_twolevel"]


def time_check(question_id):
    """(status, seconds) of one check() of the question's reference kernel."""
    kernel = solutions.solution(question_id)
    start = time.perf_counter()
    result = check(question_id, kernel)
    return result.status, time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="where to write the JSON record (default: print only)")
    args = parser.parse_args(argv)
    record = {"machine": measure.machine(), "load_before": os.getloadavg(), "checks": {}}
    for question_id in PUZZLES + LABS:
        status, seconds = time_check(question_id)
        record["checks"][question_id] = {"status": status, "seconds": round(seconds, 2)}
        print(f"{question_id:22s} {status:5s} {seconds:6.1f} s", flush=True)
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
