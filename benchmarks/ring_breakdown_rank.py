"""One GPU's process of ``benchmarks/ring_breakdown.py``: where the time of our ring over NCCL goes.

For each size, every way of driving the same ring (the same ``RingPlan``, the same messages) is
timed twice: on the GPU's clock (CUDA events around ``iters`` calls back to back, the slowest
rank, as nccl-tests does) and on the host's (the time to issue those calls, without waiting for
the GPU). When the two agree, the host sets the pace; when the host is much faster, the GPU does.
Leaving one part out at a time (the additions, the Python between steps, the per-call set-up)
attributes the difference. Alone, on one chunk: an NCCL group of one send and one receive, one
addition, and the Python that rebuilds the plan and its views on each call. Then the NVLink ring
(one kernel, the addition inside the transfer) at the launch shapes of :data:`LAUNCHES`. Every
variant that computes the sum is checked against the exact sum (outputs poisoned before it runs).
"""
import argparse
import statistics

import cupy
import numpy as np
from mpi4py import MPI

from gemmlab import measure
from gemmlab.collectives import jobs, nccl, ring_steps
from gemmlab.collectives.nccl_graph import RingGraph, close_program
from gemmlab.collectives.nvlink_ring import BLOCKS, THREADS, NvlinkRing
from gemmlab.collectives.allreduce_mpi_rank import inputs_with_exact_sum
from gemmlab.collectives.allreduce_nccl_rank import POISON, slowest_rank_seconds


def host_us(mpi, call, iters, repeats):
    """Host microseconds per call to issue ``iters`` calls back to back (no waiting inside),
    median over ``repeats`` samples of the slowest rank's."""
    sync = cupy.cuda.get_current_stream().synchronize
    samples = []
    for _ in range(repeats):
        sync()
        mpi.Barrier()
        seconds = measure.wall_seconds(lambda: [call() for _ in range(iters)], 1)[0]
        samples.append(mpi.allreduce(seconds / iters * 1e6, op=MPI.MAX))
    sync()
    return statistics.median(samples)


LAUNCHES = ((BLOCKS, THREADS), (16, 512), (64, 512), (132, 512), (32, 1024))  # NvlinkRing's


def variants(transport, mine, out, plan):
    """(name, make, computes the sum) for each way of running the ring on these buffers; ``make()``
    returns the call (a CUDA graph is recorded there, inside the caller's error handling)."""
    rank = transport.rank
    ops = ring_steps.ring_ops(plan, rank, plan.views(mine), plan.views(out))
    transfers = [op._replace(addend=None) for op in ops]
    yield "stepwise: lesson 07's ring, from Python", \
        lambda: lambda: ring_steps.ring_allreduce(transport, mine, out), True
    yield "ops prepared once, from Python", lambda: lambda: ring_steps.run_ops(transport, ops), True
    yield "ops prepared once, transfers only", \
        lambda: lambda: ring_steps.run_ops(transport, transfers), False
    yield "CUDA graph, whole chunks", lambda: RingGraph(transport, ops, out), True
    yield "CUDA graph, transfers only", lambda: RingGraph(transport, transfers, out), False
    yield "NCCL allReduce", lambda: lambda: nccl.nccl_allreduce(transport, mine, out), True
    for blocks, threads in LAUNCHES:
        default = " (the default)" if (blocks, threads) == (BLOCKS, THREADS) else ""
        yield (f"NVLink loads, addition fused: {blocks} blocks x {threads} threads{default}",
               lambda b=blocks, t=threads: NvlinkRing(transport, mine, out, b, t), True)


def components(transport, mine, out, plan):
    """(name, make, timed on the GPU too) for the parts of one call and of one step, alone."""
    op = ring_steps.ring_ops(plan, transport.rank, plan.views(mine), plan.views(out))[0]

    def prepare():
        flat, _ = ring_steps.flat_view(mine), ring_steps.output_like(mine, out)
        fresh = ring_steps.RingPlan.split(transport.size, flat.size, flat.itemsize)
        return ring_steps.ring_ops(fresh, transport.rank, fresh.views(flat), fresh.views(out))

    yield "per call: plan, views and checks (Python)", lambda: prepare, False
    yield "per step: one NCCL group, send + receive of a chunk", \
        lambda: lambda: transport.sendrecv(op.send, op.dest, op.recv, op.source), True
    yield "per step: one addition of a chunk (cupy.add)", \
        lambda: lambda: cupy.add(op.recv, op.addend, out=op.recv), True


def measure_size(transport, mpi, size, args):
    n = transport.size
    host_mine, host_exact = inputs_with_exact_sum(size // 4, np.dtype("float32"), transport.rank,
                                                  n, 0)
    mine, exact = cupy.asarray(host_mine), cupy.asarray(host_exact)
    out = cupy.full_like(mine, POISON)
    plan = ring_steps.RingPlan.split(n, mine.size, mine.itemsize)
    base = {"n_ranks": n, "size_bytes": size, "steps": 2 * (n - 1)}
    for kind, table in (("variant", variants), ("component", components)):
        for name, make, checked in table(transport, mine, out, plan):
            record, call = {**base, "kind": kind, "name": name}, None
            try:
                call = make()
                out.fill(POISON)
                if kind == "component" and not checked:
                    record["host_us"] = statistics.median(
                        measure.wall_seconds(call, args.repeats * args.iters, args.warmup)) * 1e6
                else:
                    record["gpu_us"] = statistics.median(slowest_rank_seconds(
                        mpi, call, args.iters, args.repeats, args.warmup)) * 1e6
                    record["host_us"] = host_us(mpi, call, args.iters, args.repeats)
                if kind == "variant":
                    record["exact"] = (bool(mpi.allreduce(bool(cupy.array_equal(out, exact)),
                                                          op=MPI.LAND)) if checked else None)
            except Exception as err:        # noqa: BLE001 - one failing variant must not hide the rest
                record["error"] = f"{type(err).__name__}: {err}"
                cupy.cuda.get_current_stream().synchronize()
            jobs.emit(record, mpi)
            close_program(call)
            del call


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", required=True, help="comma-separated sizes in bytes")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--iters", type=int, default=20)
    args = parser.parse_args(argv)
    mpi = jobs.world()
    transport = nccl.connect(mpi)
    jobs.emit({"kind": "machine", **measure.machine(gpu="cupy",
                                                    nccl_version=transport.nccl.get_version())},
              mpi)
    try:
        for size in (int(s) for s in args.sizes.split(",")):
            measure_size(transport, mpi, size, args)
    finally:
        transport.close()


if __name__ == "__main__":
    main()
