"""Megatron's FFN and attention on N GPUs over NCCL: one process per GPU (as in
``gemmlab.collectives.nccl``), real GEMMs (cuBLAS through CuPy's matmul), the exit all-reduce done
by our ring or by NCCL's own allReduce. Every GPU's Y is checked against the same layer computed
unsharded on one GPU, and the time of the local GEMMs is measured against the all-reduce's.

    python -m gemmlab.parallel_nccl --np 4 --layer ffn --json ffn_np4.json

The inputs (``make_inputs``), the shards and the per-rank work (``rank_ffn``, ``rank_attention``)
are gemmlab.parallel's; this module puts them on GPUs and adds the all-reduce. :func:`layer_on_rank`
takes any transport, so the tests also run it on NumPy arrays over threads. Attention here is the
non-causal kind.
"""
import argparse
import json
import statistics
import sys

import numpy as np

from .collectives.launch import mpirun
from .collectives.nccl import (ALLREDUCE, NCCL_ALGORITHMS, NVLS_OFF, BackendUnavailable,
                               check_gpu_count, visible_gpus)
from .parallel import attention_shards, rank_attention, rank_ffn, split_columns, split_rows
from .parallel.mpi import make_inputs

LAYERS = ("ffn", "attention")
RESULT_TAG = "GEMMLAB_TP_NCCL"
TOLERANCE = {"float32": 1e-4, "float16": 2e-2}    # on max |Y - Y_one_gpu| / max |Y_one_gpu|
DEFAULT_SHAPES = {"ffn": {"tokens": 4096, "d_model": 4096},            # F = 4 d_model = 16384
                  "attention": {"tokens": 2048, "d_model": 4096, "n_heads": 32}}
_HIDDEN = ("F", "Megatron's FFN gives each rank F/p of the F = 4 d_model hidden features")


def layer_shards(layer, inputs, p, n_heads=None, n_kv_heads=None):
    """Each rank's weights (one dict per rank), cut on the host by gemmlab.parallel."""
    if layer == "ffn":
        ups = split_columns(inputs["W_up"], p, *_HIDDEN)
        downs = split_rows(inputs["W_down"], p, *_HIDDEN)
        return [{"W_up": up, "W_down": down} for up, down in zip(ups, downs)]
    shards, _ = attention_shards(inputs["Wq"], inputs["Wk"], inputs["Wv"], inputs["Wo"], n_heads,
                                 p, n_kv_heads)
    return shards


def local_partial(layer, X, shard):
    """This rank's partial sum of Y: its GEMMs with GELU (FFN) or softmax (attention) between
    them. No communication."""
    if layer == "ffn":
        return rank_ffn(X, shard["W_up"], shard["W_down"])[2]
    return rank_attention(X, shard)["P"]


def layer_on_rank(transport, layer, X, shard, algorithm="ring"):
    """This rank's Y: its partial sum, then the all-reduce (``algorithm``: ring or nccl)."""
    return ALLREDUCE[algorithm](transport, local_partial(layer, X, shard))


def _on_device(xp, shard, dtype):
    return {k: xp.asarray(v, dtype=dtype) if isinstance(v, np.ndarray) else v
            for k, v in shard.items()}


def rank_report(transport, mpi, args):
    """One GPU's part of the job; rank 0 returns the report (a dict), the others None."""
    import cupy
    from mpi4py import MPI

    from . import measure
    from .collectives.nccl_worker import slowest_rank_seconds
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
    report = {"layer": args.layer, "n_ranks": p, "tokens": args.tokens, "d_model": args.d_model,
              "heads": args.heads, "kv_heads": args.kv_heads, "dtype": dtype.name,
              "payload_bytes": int(partial.nbytes), "tolerance": TOLERANCE[dtype.name],
              "one_gpu_seconds": seconds(lambda: local_partial(args.layer, X, whole)),
              "gemm_seconds": seconds(lambda: local_partial(args.layer, X, shard)),
              "allreduce_seconds": {}, "comm_share": {}, "max_rel_error": {}}
    for name in args.algos.split(","):
        out = cupy.empty_like(partial)
        t_comm = seconds(lambda: ALLREDUCE[name](transport, partial, out))
        Y = layer_on_rank(transport, args.layer, X, shard, name)
        error = float(cupy.abs(Y.astype(np.float64) - reference).max()) / scale
        report["allreduce_seconds"][name] = t_comm
        report["comm_share"][name] = t_comm / (t_comm + report["gemm_seconds"])
        report["max_rel_error"][name] = mpi.allreduce(error, op=MPI.MAX)
    report["verified"] = all(e <= report["tolerance"] for e in report["max_rel_error"].values())
    if transport.rank != 0:
        return None
    return {**measure.machine(gpu="cupy", nccl_version=transport.nccl.get_version()), **report}


def layer_shape(layer, tokens=None, d_model=None, n_heads=None):
    """The shape to run: what is given, the rest from :data:`DEFAULT_SHAPES`."""
    if layer not in LAYERS:
        raise ValueError(f"layer must be one of {', '.join(LAYERS)}, got {layer!r}")
    given = {"tokens": tokens, "d_model": d_model, "n_heads": n_heads}
    return {**DEFAULT_SHAPES[layer], **{k: v for k, v in given.items() if v is not None}}


def check_layer_request(layer, n_ranks, d_model, n_heads=None, n_kv_heads=None,
                        dtype="float32", algos=NCCL_ALGORITHMS):
    """Raise ValueError for a request that cannot run, before anything is launched."""
    if dtype not in TOLERANCE:
        raise ValueError(f"dtype {dtype!r}: expected one of {', '.join(TOLERANCE)}")
    if not algos or any(a not in NCCL_ALGORITHMS for a in algos):
        raise ValueError(f"algorithms {list(algos)}: expected some of "
                         f"{', '.join(NCCL_ALGORITHMS)}")
    if layer == "attention" and n_heads is None:
        raise ValueError("the attention layer needs n_heads")
    tiny = make_inputs(layer, 1, d_model, n_heads, n_kv_heads)          # one token: cheap
    layer_shards(layer, tiny, n_ranks, n_heads, n_kv_heads)             # raises on a bad layout


def run_layer_nccl(layer, n_ranks, tokens=None, d_model=None, n_heads=None, n_kv_heads=None,
                   dtype="float32", algos=NCCL_ALGORITHMS, repeats=5, iters=3, seed=0,
                   timeout=600):
    """Run the layer on ``n_ranks`` GPUs and return rank 0's report: gemm_seconds (the slowest
    rank's local work), one_gpu_seconds (the unsharded layer), allreduce_seconds and comm_share
    per algorithm, max_rel_error against the one-GPU result, verified. Shapes left out take
    :data:`DEFAULT_SHAPES`."""
    shape = layer_shape(layer, tokens, d_model, n_heads)
    check_layer_request(layer, n_ranks, shape["d_model"], shape.get("n_heads"), n_kv_heads, dtype,
                        list(algos))
    check_gpu_count(n_ranks, visible_gpus())
    program = ["-m", "gemmlab.parallel_nccl", "--worker", "--layer", layer,
               "--tokens", shape["tokens"], "--d-model", shape["d_model"], "--dtype", dtype,
               "--algos", ",".join(algos), "--repeats", repeats, "--iters", iters, "--seed", seed]
    program += ["--heads", shape["n_heads"]] if shape.get("n_heads") else []
    program += ["--kv-heads", n_kv_heads] if n_kv_heads is not None else []
    done = mpirun(n_ranks, program, timeout=timeout, env=NVLS_OFF)
    lines = [line for line in done.stdout.splitlines() if line.startswith(RESULT_TAG)]
    if len(lines) != 1:
        raise RuntimeError(f"expected one {RESULT_TAG} line from the job, got {len(lines)}:\n"
                           f"{done.stdout[-2000:]}")
    return json.loads(lines[0].split(" ", 1)[1])


def format_report(r):
    """A few lines: the shapes, the times, the communication share and the check."""
    lines = [f"{r['layer']} on {r['n_ranks']} x {r['gpu']}, {r['tokens']} tokens x d_model "
             f"{r['d_model']}, {r['dtype']}: local GEMMs {r['gemm_seconds'] * 1e3:.3f} ms "
             f"(unsharded on one GPU {r['one_gpu_seconds'] * 1e3:.3f} ms), all-reduce of "
             f"{r['payload_bytes'] / 2**20:g} MiB per GPU:"]
    for name, t in r["allreduce_seconds"].items():
        lines.append(f"  {name:<5} {t * 1e3:9.3f} ms = {r['comm_share'][name]:.1%} of the layer; "
                     f"max relative error vs one GPU {r['max_rel_error'][name]:.2e}")
    lines.append("every GPU matches the one-GPU result" if r["verified"] else "MISMATCH")
    return "\n".join(lines)


def _parser():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--np", type=int, default=2, dest="n_ranks",
                        help="GPUs (one process each)")
    parser.add_argument("--layer", choices=LAYERS, default="ffn")
    parser.add_argument("--tokens", type=int, help="rows of X (default per layer)")
    parser.add_argument("--d-model", type=int, dest="d_model",
                        help="model width (default per layer)")
    parser.add_argument("--heads", type=int, help="attention heads (default 32)")
    parser.add_argument("--kv-heads", type=int, dest="kv_heads", help="K/V heads (GQA)")
    parser.add_argument("--dtype", default="float32", choices=list(TOLERANCE))
    parser.add_argument("--algos", default=",".join(NCCL_ALGORITHMS))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--iters", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=int, default=600)
    parser.add_argument("--json", help="also write the report to this JSON file")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    return parser


def main(argv=None):
    """The launcher (``python -m gemmlab.parallel_nccl ...``), or one GPU's process of the job
    it starts (``--worker``, under mpiexec). Exit status 1 on a mismatch, 2 without the GPUs."""
    args = _parser().parse_args(argv)
    if args.worker:
        from mpi4py import MPI

        from .collectives.nccl import connect
        transport = connect(MPI.COMM_WORLD)
        try:
            report = rank_report(transport, MPI.COMM_WORLD, args)
        finally:
            transport.close()
        if report is not None:
            print(RESULT_TAG, json.dumps(report), flush=True)
        return 0
    try:
        report = run_layer_nccl(args.layer, args.n_ranks, args.tokens, args.d_model, args.heads,
                                args.kv_heads, args.dtype, args.algos.split(","), args.repeats,
                                args.iters, args.seed, args.timeout)
    except BackendUnavailable as err:
        print(f"gemmlab.parallel_nccl: {err}", file=sys.stderr)
        return 2
    print(format_report(report))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1)
            f.write("\n")
    return 0 if report["verified"] else 1


if __name__ == "__main__":
    sys.exit(main())
