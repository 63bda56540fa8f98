"""Seconds (wall and CPU) one kernel's compile for sm_75 and sm_90 takes: a compiler child of its
own (a notebook's ``check()``) against the grading run's warm compile service
(``gemmlab_grader.compiler``, here unconfined: Isolation()), for the reference kernels of the
GEMM labs; the median of ``--repeat`` compiles each, and the service's start-up once.

    GEMMLAB_BACKEND=sim python benchmarks/compile_service.py [--repeat 5] [--out FILE.json]

CPU seconds: the one-shot child's from this process's children; the service's from its leader
(its own and its reaped forks', which include ptxas). Writes the machine, its load average
before and after, and the date beside the figures.
"""
import argparse
import json
import os
import resource
import statistics
import time

from gemmlab import measure
from gemmlab.labs import compile as nvc
from gemmlab.labs import solutions
from gemmlab_grader.compiler import CompileService
from gemmlab_grader.isolate import Isolation

LABS = ["05.lab_naive", "05.lab_tiled", "08.lab_pingpong", "10.lab_outer", "11.lab_twolevel"]
ARGUMENTS = [["array", "float32", 2]] * 3


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def leader_cpu(pid):
    """CPU seconds of the process ``pid`` and of the children it has reaped."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def timed(kernel, repeat, cpu, compiler=None):
    """(median wall seconds, median CPU seconds, the last reply) of ``repeat`` compiles."""
    walls, cpus = [], []
    for _ in range(repeat):
        before, start = cpu(), time.perf_counter()
        reply = nvc.compile_kernel(kernel, ARGUMENTS, compiler=compiler)
        walls.append(time.perf_counter() - start)
        cpus.append(cpu() - before)
    return statistics.median(walls), statistics.median(cpus), reply


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", help="where to write the JSON record (default: print only)")
    args = parser.parse_args(argv)
    record = {"machine": measure.machine(), "load_before": os.getloadavg(), "kernels": {}}
    service = CompileService(Isolation())
    try:
        start = time.perf_counter()
        service.compile({"source": "", "name": "none", "arguments": [], "archs": [], "cell": ""})
        [leader] = service.pids()
        record["service_start"] = {"wall_s": round(time.perf_counter() - start, 2),
                                   "cpu_s": round(leader_cpu(leader), 2)}
        for question_id in LABS:
            kernel = solutions.solution(question_id)
            alone = timed(kernel, args.repeat, children_cpu)
            served = timed(kernel, args.repeat, lambda: leader_cpu(leader), service)
            record["kernels"][question_id] = {
                "one_shot": {"wall_s": round(alone[0], 2), "cpu_s": round(alone[1], 2)},
                "service": {"wall_s": round(served[0], 2), "cpu_s": round(served[1], 2)},
                "same_figures": alone[2] == served[2]}
            print(question_id, record["kernels"][question_id], flush=True)
    finally:
        service.close()
    record["load_after"] = os.getloadavg()
    record["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    if args.out:
        with open(args.out, "w") as f:
            json.dump(record, f, indent=1)
    print(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()
