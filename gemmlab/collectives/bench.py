"""Benchmark of lesson 07 (not a test): the MPI ring all-reduce against MPI's own Allreduce, an
alpha-beta fit over a sweep of sizes, and the simulator's speed at 128 ranks x 1 MiB.

    python -m gemmlab.collectives.bench --np 4 --out benchmarks/allreduce_cpu.json

writes the raw records, the fits and the machine description (CPU, cores, MPI library, versions,
date) to the JSON file and prints a summary.
"""
import argparse
import json
import statistics

import numpy as np

from .. import device, measure
from . import ALLREDUCE
from .fit import fit_records
from .jobs import mpirun
from .allreduce_command import format_table, parse_size, run_allreduce

SWEEP = [1 << k for k in range(12, 27, 2)]     # 4 KiB .. 64 MiB


def mpi_library():
    """The first line of MPI_Get_library_version, read from a one-rank job."""
    done = mpirun(1, ["-c", "from mpi4py import MPI; print(MPI.Get_library_version())"], 60)
    return done.stdout.strip().splitlines()[0].strip()


def machine():
    """CPU, cores, versions and date (``gl.measure.machine``), with the MPI library."""
    return measure.machine(gpu=None, mpi4py=device.package_version("mpi4py"),
                           **{"mpich wheel": device.package_version("mpich")},
                           mpi_library=mpi_library())


def simulator_seconds(n_ranks=128, size_bytes=2**20, repeats=3):
    """Median wall time of each simulated all-reduce on n_ranks float32 buffers of size_bytes."""
    rng = np.random.default_rng(0)
    buffers = [rng.standard_normal(size_bytes // 4).astype(np.float32) for _ in range(n_ranks)]
    result = {}
    for name, fn in ALLREDUCE.items():
        result[name] = statistics.median(measure.wall_seconds(lambda fn=fn: fn(buffers), repeats))
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--np", type=int, action="append", dest="ranks",
                        help="processes (repeat the option for several counts; default 4)")
    parser.add_argument("--size", default="64MiB", help="the headline size per rank")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--out", help="write everything to this JSON file")
    args = parser.parse_args(argv)
    size = parse_size(args.size)
    report = {"machine": machine(), "headline": [], "sweep": [], "fits": [], "simulator": {}}
    for n in args.ranks or [4]:
        head = run_allreduce(n, [size], repeats=args.repeats, timeout=600)
        print(format_table(head))
        bw = {r["algorithm"]: r["busbw"] for r in head}
        print(f"{n} ranks, {args.size}: ring reaches {bw['ring'] / bw['mpi']:.0%} of MPI "
              f"Allreduce's bandwidth; centralized {bw['centralized'] / bw['mpi']:.0%}\n")
        sweep = run_allreduce(n, SWEEP, repeats=5, timeout=600)
        fits = fit_records(sweep)
        for fit in fits:
            print(fit)
        report["headline"] += head
        report["sweep"] += sweep
        report["fits"] += [vars(f) for f in fits]
    report["simulator"] = {"n_ranks": 128, "size_bytes": 2**20,
                           "seconds": simulator_seconds(128, 2**20)}
    print("\nsimulator, 128 ranks x 1 MiB float32 (median of 3, seconds):")
    for name, seconds in report["simulator"]["seconds"].items():
        print(f"  {name:<20}{seconds:8.3f}")
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1)
            f.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
