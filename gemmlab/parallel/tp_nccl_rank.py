"""Megatron's FFN and attention on N GPUs over NCCL, one GPU's side: real GEMMs (cuBLAS through
CuPy's matmul) and the exit all-reduce done by our ring or by NCCL's own allReduce.

``gemmlab tp --backend nccl`` (:mod:`gemmlab.parallel.tp`) starts one process per GPU; each runs
:func:`rank_report`. The inputs (``tp.make_inputs``), the shards (``tp.layer_shards``) and the
per-rank work (``tp.local_partial``) are the CPU runs' own; this module puts them on a GPU, times
the local work against the all-reduce, and checks every GPU's Y against the same layer computed
unsharded on one GPU. :func:`layer_on_rank` takes any transport, so the tests run it on NumPy
arrays over threads. Attention here is the non-causal kind.
"""
import statistics

import numpy as np

from ..collectives.ring_steps import ring_allreduce
from ..collectives.nccl_graph import allreduce_program, close_program
from .tp import TOLERANCE, layer_shards, local_partial, make_inputs


def layer_on_rank(transport, layer, X, shard, allreduce=ring_allreduce):
    """This rank's Y: its partial sum, then ``allreduce(transport, partial)`` (by default our ring,
    step by step)."""
    return allreduce(transport, local_partial(layer, X, shard))


def _on_device(xp, shard, dtype):
    return {k: xp.asarray(v, dtype=dtype) if isinstance(v, np.ndarray) else v
            for k, v in shard.items()}


def rank_report(transport, mpi, args):
    """One GPU's part of the job; rank 0 returns the report (a dict), the others None."""
    import cupy
    from mpi4py import MPI

    from .. import measure
    from ..collectives.allreduce_nccl_rank import slowest_rank_seconds
    inputs = make_inputs(args.layer, args.tokens, args.d_model, args.heads, args.kv_heads,
                         seed=args.seed)
    dtype, p = np.dtype(args.dtype), transport.size
    X = cupy.asarray(inputs["X"], dtype=dtype)
    shard = _on_device(cupy, layer_shards(args.layer, inputs, p, args.heads, args.kv_heads)
                       [transport.rank], dtype)
    whole = _on_device(cupy, layer_shards(args.layer, inputs, 1, args.heads, args.kv_heads)[0],
                       dtype)

    def seconds(call):
        return statistics.median(slowest_rank_seconds(mpi, call, args.iters, args.repeats,
                                                         warmup=1))

    reference = local_partial(args.layer, X, whole)         # the unsharded layer on one GPU
    scale = float(cupy.abs(reference).max())
    partial = local_partial(args.layer, X, shard)
    report = {"layer": args.layer, "backend": "nccl", "n_ranks": p, "tokens": args.tokens,
              "d_model": args.d_model, "heads": args.heads, "kv_heads": args.kv_heads,
              "dtype": dtype.name, "payload_bytes": int(partial.nbytes),
              "tolerance": TOLERANCE[dtype.name],
              "one_gpu_seconds": seconds(lambda: local_partial(args.layer, X, whole)),
              "gemm_seconds": seconds(lambda: local_partial(args.layer, X, shard)),
              "allreduce_seconds": {}, "comm_share": {}, "max_rel_error": {}}
    for name in args.algos.split(","):
        Y = cupy.full_like(partial, np.nan)
        allreduce = allreduce_program(name, transport, partial, Y)
        t_comm = seconds(allreduce)                  # Y now holds this rank's sum of partials
        error = float(cupy.abs(Y.astype(np.float64) - reference).max()) / scale
        report["allreduce_seconds"][name] = t_comm
        report["comm_share"][name] = t_comm / (t_comm + report["gemm_seconds"])
        report["max_rel_error"][name] = mpi.allreduce(error, op=MPI.MAX)
        close_program(allreduce)
    report["verified"] = all(e <= report["tolerance"] for e in report["max_rel_error"].values())
    if transport.rank != 0:
        return None
    return {**measure.machine(gpu="cupy", nccl_version=transport.nccl.get_version()), **report}
