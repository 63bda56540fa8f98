"""One MPI rank of ``gemmlab allreduce``: time each algorithm on each size and check its result.

Started by :func:`gemmlab.collectives.allreduce_command.run_allreduce` through the one launcher
(``jobs``). Rank r's input is ``a + r * b`` with small random integers ``a`` and ``b`` shared by
all ranks, so the exact sum, ``N a + N(N-1)/2 b``, is known without any communication and is
exactly representable even in float32 (it stays far below 2^24). Every rank compares its result
with it bit for bit. Rank 0 emits one record per (algorithm, size). The other ranks that
time an all-reduce use its parts: :mod:`.allreduce_nccl_rank` its inputs and options,
:mod:`gemmlab.labs.run_mpi_rank` its options, :func:`measure` and :func:`report`.
"""
import argparse
import statistics

import numpy as np
from mpi4py import MPI

from .jobs import emit, world
from .mpi_allreduce import ALGORITHMS


def inputs_with_exact_sum(n_items, dtype, rank, n_ranks, seed):
    """(this rank's buffer, the exact sum over all ranks): integers, so every order sums exactly."""
    rng = np.random.default_rng(seed)
    a = rng.integers(-1000, 1001, n_items).astype(dtype)
    b = rng.integers(-8, 9, n_items).astype(dtype)
    mine = a + dtype.type(rank) * b
    exact = dtype.type(n_ranks) * a + dtype.type(n_ranks * (n_ranks - 1) // 2) * b
    return mine, exact


def _time_once(comm, algorithm, buf):
    comm.Barrier()
    start = MPI.Wtime()
    out = algorithm(comm, buf)
    elapsed = MPI.Wtime() - start
    return out, comm.allreduce(elapsed, op=MPI.MAX)     # the slowest rank sets the time


def measure(comm, algos, size_bytes, dtype, repeats, warmup, seed, table=ALGORITHMS):
    """Per algorithm: the times of ``repeats`` runs (after ``warmup``) and whether every run on
    every rank gave the exact sum. Algorithms take turns, so drift in the machine's load is
    shared between them. ``table`` maps each name to a function ``algorithm(comm, buf)``."""
    n_items = size_bytes // dtype.itemsize
    mine, exact = inputs_with_exact_sum(n_items, dtype, comm.Get_rank(), comm.Get_size(), seed)
    times = {name: [] for name in algos}
    correct = {name: True for name in algos}
    for rep in range(warmup + repeats):
        for name in algos:
            out, seconds = _time_once(comm, table[name], mine)
            correct[name] &= bool(np.array_equal(out, exact))
            if rep >= warmup:
                times[name].append(seconds)
    return {name: (times[name], bool(comm.allreduce(correct[name], op=MPI.LAND)))
            for name in algos}


def report(comm, results, size_bytes, dtype):
    """One record per algorithm of :func:`measure`'s results, emitted by rank 0 (``jobs.emit``)."""
    for name, (times, ok) in results.items():
        emit({"algorithm": name, "n_ranks": comm.Get_size(), "size_bytes": size_bytes,
              "dtype": dtype.name, "seconds": statistics.median(times), "times": times,
              "verified": ok}, comm)


def add_timing_arguments(parser):
    """The options of :func:`measure`: --dtype, --repeats, --warmup, --seed."""
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--algos", required=True, help="comma-separated: ring,centralized,mpi")
    parser.add_argument("--sizes", required=True, help="comma-separated sizes in bytes")
    add_timing_arguments(parser)
    args = parser.parse_args(argv)
    comm = world()
    dtype = np.dtype(args.dtype)
    algos = args.algos.split(",")
    for size in (int(s) for s in args.sizes.split(",")):
        report(comm, measure(comm, algos, size, dtype, args.repeats, args.warmup, args.seed),
               size, dtype)


if __name__ == "__main__":
    main()
