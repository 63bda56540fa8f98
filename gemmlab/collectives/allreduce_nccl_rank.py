"""One GPU's process of ``gemmlab allreduce --backend nccl``: time our ring and NCCL's collectives
on each size and check every result against the exact sum.

Started by :func:`gemmlab.collectives.allreduce_command.run_allreduce_nccl` through the one
launcher (``jobs``). The inputs are the MPI ranks' (:mod:`.allreduce_mpi_rank`: ``a + rank * b``
with small random integers, so the float32 sum is exact and known without communication). Timing
follows nccl-tests: after a barrier, ``iters`` calls back to back between two CUDA events, their
mean per call, the slowest rank's; the median of ``repeats`` such samples is reported. Each output
is poisoned before its run and compared with the exact result after it. Each size also checks our
and NCCL's reduce-scatter and all-gather once. Rank 0 emits one record per (algorithm, size).
"""
import argparse
import statistics

import numpy as np
from mpi4py import MPI

from .. import measure
from .jobs import emit, world
from .nccl import connect, nccl_allgather, nccl_reduce_scatter
from .ring_steps import RingPlan, ring_allgather, ring_reduce_scatter
from .nccl_graph import COLLECTIVES, allreduce_program, close_program
from .allreduce_mpi_rank import inputs_with_exact_sum, add_timing_arguments

POISON = -(1 << 22)    # written into outputs before a run: no exact sum here is that far from 0


def slowest_rank_seconds(mpi, call, iters, repeats, warmup):
    """Seconds per call of ``call()``, one value per sample: ``gl.measure``'s CUDA-event timer
    with ``iters`` calls per sample and the ranks meeting at a barrier before each, then the
    slowest rank's time of that sample (nccl-tests' convention)."""
    samples = measure.cuda_event_ms(call, repeats, warmup, events="cupy", batch=iters,
                                    before_sample=mpi.Barrier)
    return [mpi.allreduce(ms / 1e3, op=MPI.MAX) for ms in samples]


def _everywhere(mpi, ok):
    return bool(mpi.allreduce(bool(ok), op=MPI.LAND))


def check_partials(transport, mpi, mine, exact):
    """Whether our and NCCL's reduce-scatter and all-gather give every GPU the exact result; None
    for NCCL's when the item count does not divide by the ranks (NCCL needs equal blocks)."""
    import cupy
    n, rank = transport.size, transport.rank
    plan = RingPlan.split(n, mine.size, mine.itemsize)
    my_block = plan.views(exact)[rank]
    checks = {
        "ring reduce-scatter": _everywhere(mpi, cupy.array_equal(
            ring_reduce_scatter(transport, mine), my_block)),
        "ring all-gather": _everywhere(mpi, cupy.array_equal(
            ring_allgather(transport, my_block, plan.counts), exact)),
        "nccl reduce-scatter": None, "nccl all-gather": None}
    if mine.size % n == 0:
        checks["nccl reduce-scatter"] = _everywhere(mpi, cupy.array_equal(
            nccl_reduce_scatter(transport, mine), my_block))
        checks["nccl all-gather"] = _everywhere(mpi, cupy.array_equal(
            nccl_allgather(transport, my_block), exact))
    return checks


def timed_call(name, transport, mine, exact, plan):
    """(call, out, expected) for one algorithm: ``out`` is poisoned, ``call()`` fills it, and it
    must then equal ``expected`` (the exact sum, or this rank's block of it)."""
    import cupy
    collective = COLLECTIVES.get(name, "allreduce")
    if collective == "allreduce":
        out = cupy.full_like(mine, POISON)
        return allreduce_program(name, transport, mine, out), out, exact
    block = plan.views(exact)[transport.rank]
    if collective == "reducescatter":
        out = cupy.full_like(block, POISON)
        return (lambda: transport.reduce_scatter(mine, out)), out, block
    own, out = block.copy(), cupy.full_like(exact, POISON)
    return (lambda: transport.allgather(own, out)), out, exact


def measure_size(transport, mpi, algos, size_bytes, dtype, args):
    """The records of one size: per algorithm, its samples, whether every GPU got the exact result
    (and kept its input), and the reduce-scatter / all-gather checks."""
    import cupy
    n = transport.size
    host_mine, host_exact = inputs_with_exact_sum(size_bytes // dtype.itemsize, dtype, transport.rank, n,
                                    args.seed)
    mine, exact = cupy.asarray(host_mine), cupy.asarray(host_exact)
    checks = check_partials(transport, mpi, mine, exact)
    plan = RingPlan.split(n, mine.size, mine.itemsize)
    records = []
    for name in algos:
        call, out, expected = timed_call(name, transport, mine, exact, plan)
        samples = slowest_rank_seconds(mpi, call, args.iters, args.repeats, args.warmup)
        verified = _everywhere(mpi, cupy.array_equal(out, expected)
                               and cupy.array_equal(mine, cupy.asarray(host_mine)))
        mine_checks = {k.split(" ", 1)[1]: ok for k, ok in checks.items()
                       if k.split(" ", 1)[0] == name}
        records.append({
            "algorithm": name, "collective": COLLECTIVES.get(name, "allreduce"),
            "backend": "nccl", "n_ranks": n, "size_bytes": size_bytes, "dtype": dtype.name,
            "seconds": statistics.median(samples), "times": samples, "iters": args.iters,
            "verified": verified, "checks": mine_checks,
            "checks_passed": all(ok is not False for ok in mine_checks.values()),
            "sent_bytes_per_rank": (plan.result(name, [None] * n).sent_bytes.tolist()
                                    if name.startswith("ring") else None)})
        close_program(call)
        del call, out
    return records


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--algos", required=True,
                        help="comma-separated names of nccl_graph.ALGORITHMS")
    parser.add_argument("--sizes", required=True, help="comma-separated sizes in bytes")
    add_timing_arguments(parser)         # --warmup's default is the MPI rank's: the command passes it
    parser.add_argument("--iters", type=int, default=20)
    args = parser.parse_args(argv)
    mpi = world()
    transport = connect(mpi)
    machine = measure.machine(gpu="cupy", nccl_version=transport.nccl.get_version())
    dtype = np.dtype(args.dtype)
    try:
        for size in (int(s) for s in args.sizes.split(",")):
            for record in measure_size(transport, mpi, args.algos.split(","), size, dtype, args):
                emit({**machine, **record}, mpi)
    finally:
        transport.close()


if __name__ == "__main__":
    main()
