"""Megatron's FFN and attention on real processes, one per rank: ``gemmlab tp``.

    gemmlab tp --backend mpi --np 4 --layer ffn            # CPU processes, the MPI ring
    gemmlab tp --backend nccl --np 2 --layer attention     # one process per GPU, over NCCL

:func:`run_layer` checks the request, starts the ranks through the one launcher
(``gemmlab.collectives.jobs``, program ``gemmlab.parallel.tp_rank``) and returns rank 0's
report. Every rank builds the same inputs from the seed (:func:`make_inputs`) and keeps only its
own shards (:func:`layer_shards`). Over MPI, each rank's Y is checked against the float64
reference and against the single-process simulation, bit for bit (``parallel.tp_mpi_rank``). Over NCCL,
real GEMMs run on each GPU, the exit all-reduce is timed for our ring and NCCL's, and every Y is
checked against the layer computed unsharded on one GPU (``parallel.tp_nccl_rank``).
"""
import json
import sys

import numpy as np

from ..collectives import jobs
from ..collectives.nccl import BackendUnavailable, check_gpu_count, visible_gpus
from ..collectives.nccl_graph import ALLREDUCE_ALGORITHMS
from ..numeric_args import whole_number
from .attention import attention_shards, rank_attention
from .ffn import rank_ffn
from .sharding import split_columns, split_rows

BACKENDS = ("mpi", "nccl")
LAYERS = ("ffn", "attention")
DEFAULT_SHAPES = {                       # the NCCL shapes keep a GPU busy; MPI's run on a laptop
    "mpi": {"ffn": {"tokens": 64, "d_model": 128},
            "attention": {"tokens": 32, "d_model": 64, "n_heads": 8}},
    "nccl": {"ffn": {"tokens": 4096, "d_model": 4096},                  # F = 4 d_model = 16384
             "attention": {"tokens": 2048, "d_model": 4096, "n_heads": 32}},
}
TOLERANCE = {"float32": 1e-4, "float16": 2e-2}    # NCCL: max |Y - Y_one_gpu| / max |Y_one_gpu|
_HIDDEN = ("F", "Megatron's FFN gives each rank F/p of the F = 4 d_model hidden features")


def weight_shapes(layer, d_model, n_heads=None, n_kv_heads=None):
    """The shapes of one test layer's weights by name, in the order :func:`make_inputs` draws
    them: the FFN's W_up and W_down (F = 4 d_model), or attention's Wq, Wk, Wv and Wo."""
    if layer == "ffn":
        F = 4 * d_model
        return {"W_up": (d_model, F), "W_down": (F, d_model)}
    kv_width = (n_heads if n_kv_heads is None else n_kv_heads) * (d_model // n_heads)
    return {"Wq": (d_model, d_model), "Wk": (d_model, kv_width), "Wv": (d_model, kv_width),
            "Wo": (d_model, d_model)}


def make_inputs(layer, tokens, d_model, n_heads=None, n_kv_heads=None, bias=False, seed=0):
    """The float32 inputs of one test layer, the same on every rank for the same arguments: X, the
    weights (each scaled by 1/sqrt(its rows), except Wv) and the exit bias (None without one)."""
    rng = np.random.default_rng(seed)

    def rand(shape, scale=1.0):
        return (scale * rng.standard_normal(shape)).astype(np.float32)

    X = rand((tokens, d_model))
    b = rand((d_model,)) if bias else None
    weights = {name: rand(shape, 1.0 if name == "Wv" else shape[0] ** -0.5)
               for name, shape in weight_shapes(layer, d_model, n_heads, n_kv_heads).items()}
    return {"X": X, **weights, ("b_down" if layer == "ffn" else "b_o"): b}


def layer_shards(layer, inputs, p, n_heads=None, n_kv_heads=None):
    """Each rank's weights (one dict per rank), cut on the host; raises ValueError for a layout
    that does not divide among ``p`` ranks."""
    if layer == "ffn":
        ups = split_columns(inputs["W_up"], p, *_HIDDEN)
        downs = split_rows(inputs["W_down"], p, *_HIDDEN)
        return [{"W_up": up, "W_down": down} for up, down in zip(ups, downs, strict=True)]
    shards, _ = attention_shards(inputs["Wq"], inputs["Wk"], inputs["Wv"], inputs["Wo"], n_heads,
                                 p, n_kv_heads)
    return shards


def local_partial(layer, X, shard, causal=False):
    """This rank's partial sum of Y: its GEMMs with GELU (FFN) or softmax (attention) between
    them, on NumPy or CuPy arrays. No communication."""
    if layer == "ffn":
        return rank_ffn(X, shard["W_up"], shard["W_down"])[2]
    return rank_attention(X, shard, causal)["P"]


def layer_shape(backend, layer, tokens=None, d_model=None, n_heads=None):
    """The shape to run: what is given, the rest from :data:`DEFAULT_SHAPES`."""
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if layer not in LAYERS:
        raise ValueError(f"layer must be one of {', '.join(LAYERS)}, got {layer!r}")
    given = {"tokens": tokens, "d_model": d_model, "n_heads": n_heads}
    return {**DEFAULT_SHAPES[backend][layer], **{k: v for k, v in given.items() if v is not None}}


def check_request(backend, layer, n_ranks, shape, n_kv_heads=None, dtype="float32", causal=False,
                  bias=False, algos=None, repeats=5, iters=3):
    """Raise ValueError for a request that cannot run, before anything is launched; return the
    all-reduce algorithms to time (NCCL) or None (MPI)."""
    whole_number("the number of ranks (--np)", n_ranks)
    for name, value in (*shape.items(), ("repeats", repeats), ("iters", iters)):
        whole_number(name, value)
    if backend == "mpi":
        misplaced = [name for name, given in (("dtype", dtype != "float32"),
                                              ("algos", algos is not None)) if given]
        if misplaced:
            raise ValueError(f"{', '.join(misplaced)}: for the NCCL backend only; over MPI the "
                             f"layer runs in float32 with the course's MPI ring")
    else:
        if causal or bias:
            raise ValueError("causal and bias apply to the MPI backend only: the NCCL run times "
                             "the non-causal layer without bias")
        if dtype not in TOLERANCE:
            raise ValueError(f"dtype {dtype!r}: expected one of {', '.join(TOLERANCE)}")
        algos = list(ALLREDUCE_ALGORITHMS if algos is None else algos)
        if not algos or any(a not in ALLREDUCE_ALGORITHMS for a in algos):
            raise ValueError(f"algorithms {algos}: expected some of "
                             f"{', '.join(ALLREDUCE_ALGORITHMS)}")
    # the layout from the shapes alone: zero-stride stand-ins, no weights drawn or held
    stand_ins = {name: np.broadcast_to(np.float32(0), s) for name, s in
                 weight_shapes(layer, shape["d_model"], shape.get("n_heads"), n_kv_heads).items()}
    layer_shards(layer, stand_ins, n_ranks, shape.get("n_heads"), n_kv_heads)   # raises if bad
    return algos if backend == "nccl" else None


def run_layer(backend, layer, n_ranks, tokens=None, d_model=None, n_heads=None, n_kv_heads=None,
              dtype="float32", causal=False, bias=False, algos=None, repeats=5, iters=3, seed=0,
              timeout=600):
    """Run the layer on ``n_ranks`` processes and return rank 0's report.

    Both backends report layer, backend, n_ranks, the shape and ``verified``. MPI (float32, any
    machine; ``causal`` and ``bias`` apply): max_error against the float64 reference,
    identical_to_simulation, seconds (slowest rank), sent_bytes_per_rank. NCCL (``dtype``
    float32 or float16, ``algos`` among ring, ring_stepwise, ring_nvlink, nccl): gemm_seconds (the slowest
    rank's local work), one_gpu_seconds (the unsharded layer), allreduce_seconds and comm_share
    per algorithm, max_rel_error against one GPU, and the machine. Shapes left out take
    :data:`DEFAULT_SHAPES`. Raises ValueError for a bad request, BackendUnavailable when the
    GPUs are missing, RuntimeError when the job fails.
    """
    shape = layer_shape(backend, layer, tokens, d_model, n_heads)
    algos = check_request(backend, layer, n_ranks, shape, n_kv_heads, dtype, causal, bias, algos,
                          repeats, iters)
    if backend == "nccl":
        check_gpu_count(n_ranks, visible_gpus())
    program = ["-m", "gemmlab.parallel.tp_rank", "--backend", backend, "--layer", layer,
               "--tokens", shape["tokens"], "--d-model", shape["d_model"], "--dtype", dtype,
               "--repeats", repeats, "--iters", iters, "--seed", seed]
    program += ["--heads", shape["n_heads"]] if "n_heads" in shape else []
    program += ["--kv-heads", n_kv_heads] if n_kv_heads is not None else []
    program += ["--algos", ",".join(algos)] if algos else []
    program += ["--causal"] * bool(causal) + ["--bias"] * bool(bias)
    (report,) = jobs.run(n_ranks, program, timeout=timeout, expected=1)
    return report


def format_report(r):
    """A few lines: the shapes, the check and, over NCCL, the times and the communication share."""
    if r["backend"] == "mpi":
        return (f"{r['layer']} on {r['n_ranks']} MPI processes, {r['tokens']} tokens x d_model "
                f"{r['d_model']}: max error vs the float64 reference {r['max_error']:.2e}, "
                f"{'bit for bit' if r['identical_to_simulation'] else 'NOT'} the simulated "
                f"layer; each rank sent {max(r['sent_bytes_per_rank'])} bytes; "
                f"{r['seconds'] * 1e3:.1f} ms\n"
                + ("every rank matches the reference" if r["verified"] else "MISMATCH"))
    lines = [f"{r['layer']} on {r['n_ranks']} x {r['gpu']}, {r['tokens']} tokens x d_model "
             f"{r['d_model']}, {r['dtype']}: local GEMMs {r['gemm_seconds'] * 1e3:.3f} ms "
             f"(unsharded on one GPU {r['one_gpu_seconds'] * 1e3:.3f} ms), all-reduce of "
             f"{r['payload_bytes'] / 2**20:g} MiB per GPU:"]
    for name, t in r["allreduce_seconds"].items():
        lines.append(f"  {name:<13} {t * 1e3:9.3f} ms = {r['comm_share'][name]:.1%} of the "
                     f"layer; max relative error vs one GPU {r['max_rel_error'][name]:.2e}")
    lines.append("every GPU matches the one-GPU result" if r["verified"] else "MISMATCH")
    return "\n".join(lines)


def add_arguments(parser):
    """The options of ``gemmlab tp``."""
    parser.add_argument("--backend", choices=BACKENDS, default="mpi",
                        help="mpi: CPU processes, the course's MPI ring; nccl: one process per "
                             "GPU, real GEMMs, our ring and NCCL's all-reduce timed")
    parser.add_argument("--np", type=int, default=2, dest="n_ranks", help="processes (ranks)")
    parser.add_argument("--layer", choices=LAYERS, default="ffn")
    parser.add_argument("--tokens", type=int, help="rows of X (default per backend and layer)")
    parser.add_argument("--d-model", type=int, dest="d_model", help="model width")
    parser.add_argument("--heads", type=int, dest="n_heads", help="attention heads")
    parser.add_argument("--kv-heads", type=int, dest="n_kv_heads", help="K/V heads (GQA)")
    parser.add_argument("--dtype", default="float32", help="nccl: float32 or float16")
    parser.add_argument("--algo", dest="algos", help="nccl: comma-separated all-reduces to time, "
                                                     "some of ring, ring_stepwise, ring_nvlink, "
                                                     "nccl")
    parser.add_argument("--causal", action="store_true", help="mpi: causal attention")
    parser.add_argument("--bias", action="store_true", help="mpi: the exit bias, added once")
    parser.add_argument("--repeats", type=int, default=5, help="nccl: timed samples (median)")
    parser.add_argument("--iters", type=int, default=3, help="nccl: calls per timed sample")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=int, default=600, help="seconds before the job is killed")
    parser.add_argument("--json", help="also write the report to this JSON file")


def main(args):
    """``gemmlab tp`` with parsed arguments: exit status 0 when every rank matches, 1 on a
    mismatch or a failed job, 2 for a request that cannot run here (one line saying why)."""
    try:
        report = run_layer(args.backend, args.layer, args.n_ranks, args.tokens, args.d_model,
                           args.n_heads, args.n_kv_heads, args.dtype, args.causal, args.bias,
                           args.algos.split(",") if args.algos else None, args.repeats,
                           args.iters, args.seed, args.timeout)
    except (ValueError, BackendUnavailable) as err:
        print(f"gemmlab tp: {err}", file=sys.stderr)
        return 2
    except RuntimeError as err:
        print(f"gemmlab tp: the job failed: {err}", file=sys.stderr)
        return 1
    print(format_report(report))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=1)
            f.write("\n")
    return 0 if report["verified"] else 1
