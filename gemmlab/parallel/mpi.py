"""Megatron's FFN and attention over real processes: one MPI process per rank (mpi4py), each
holding only its own shards, the exit all-reduce done by the ring of ``gemmlab.collectives.mpi``.

:func:`run_on_mpi` (the parent side) launches ``mpiexec -n p python -m mpi4py -m
gemmlab.parallel.mpi ...`` through the collectives' launcher and returns what rank 0 reports.
In the job, every rank builds the same random inputs from the seed, keeps its shards, computes its
partial sum, joins the ring all-reduce, and checks its Y against the unsharded float64 reference
and against the single-process simulation (which adds in the same order, so it should match bit
for bit). ``ffn_on_rank`` and ``attention_on_rank`` take any mpi4py communicator.
"""
import argparse
import json

import numpy as np

from .attention import attention_reference, attention_shards, megatron_attention, rank_attention
from .ffn import ffn_reference, megatron_ffn, rank_ffn
from .sharding import split_columns, split_rows

RESULT_TAG = "GEMMLAB_TP"
LAYERS = ("ffn", "attention")


def ffn_on_rank(comm, X, W_up_r, W_down_r, b_down=None):
    """This rank's Y of Megatron's FFN: local GEMMs and GELU, then the ring all-reduce (MPI)."""
    from ..collectives import mpi as ring
    _, _, P = rank_ffn(X, W_up_r, W_down_r)
    Y = ring.ring_allreduce(comm, P)
    return Y if b_down is None else Y + b_down


def attention_on_rank(comm, X, shard, causal=False, b_o=None):
    """This rank's Y of Megatron's attention for its shard (see ``attention_shards``)."""
    from ..collectives import mpi as ring
    Y = ring.ring_allreduce(comm, rank_attention(X, shard, causal)["P"])
    return Y if b_o is None else Y + b_o


def make_inputs(layer, tokens, d_model, n_heads=None, n_kv_heads=None, bias=False, seed=0):
    """The float32 inputs of one test layer, the same on every rank for the same arguments."""
    rng = np.random.default_rng(seed)

    def rand(*shape, scale=1.0):
        return (scale * rng.standard_normal(shape)).astype(np.float32)

    X = rand(tokens, d_model)
    b = rand(d_model) if bias else None
    if layer == "ffn":
        F = 4 * d_model
        return dict(X=X, W_up=rand(d_model, F, scale=d_model ** -0.5),
                    W_down=rand(F, d_model, scale=F ** -0.5), b_down=b)
    kv = n_heads if n_kv_heads is None else n_kv_heads
    kv_width = kv * (d_model // n_heads)
    return dict(X=X, Wq=rand(d_model, d_model, scale=d_model ** -0.5),
                Wk=rand(d_model, kv_width, scale=d_model ** -0.5), Wv=rand(d_model, kv_width),
                Wo=rand(d_model, d_model, scale=d_model ** -0.5), b_o=b)


def _simulate(layer, inputs, p, n_heads, n_kv_heads, causal):
    """Reference (float64, unsharded) and simulated (one process) results of the layer."""
    if layer == "ffn":
        args = (inputs["X"], inputs["W_up"], inputs["W_down"])
        return (ffn_reference(*args, b_down=inputs["b_down"]),
                megatron_ffn(*args, p, b_down=inputs["b_down"]))
    args = tuple(inputs[k] for k in ("X", "Wq", "Wk", "Wv", "Wo"))
    return (attention_reference(*args, n_heads, n_kv_heads, causal, inputs["b_o"]),
            megatron_attention(*args, n_heads, p, n_kv_heads, causal, inputs["b_o"]))


def _rank_output(comm, layer, inputs, n_heads, n_kv_heads, causal):
    p, r = comm.Get_size(), comm.Get_rank()
    if layer == "ffn":
        W_up_r = split_columns(inputs["W_up"], p)[r]
        W_down_r = split_rows(inputs["W_down"], p)[r]
        return ffn_on_rank(comm, inputs["X"], W_up_r, W_down_r, inputs["b_down"])
    shards, _ = attention_shards(inputs["Wq"], inputs["Wk"], inputs["Wv"], inputs["Wo"],
                                 n_heads, p, n_kv_heads)
    return attention_on_rank(comm, inputs["X"], shards[r], causal, inputs["b_o"])


def rank_main(comm, args):
    """One rank's part of the job; rank 0 returns the report (a dict), the others None."""
    from mpi4py import MPI
    inputs = make_inputs(args.layer, args.tokens, args.d_model, args.heads, args.kv_heads,
                         args.bias, args.seed)
    comm.Barrier()
    start = MPI.Wtime()
    Y = _rank_output(comm, args.layer, inputs, args.heads, args.kv_heads, args.causal)
    seconds = comm.allreduce(MPI.Wtime() - start, op=MPI.MAX)
    reference, simulated = _simulate(args.layer, inputs, comm.Get_size(), args.heads,
                                     args.kv_heads, args.causal)
    mine = simulated.outputs[comm.Get_rank()]
    error = float(np.abs(Y.astype(np.float64) - reference).max())
    identical = bool(np.array_equal(Y, mine))
    scale = max(1.0, float(np.abs(reference).max()))
    errors = comm.gather(error, root=0)
    identical_all = comm.gather(identical, root=0)
    if comm.Get_rank() != 0:
        return None
    return {"layer": args.layer, "n_ranks": comm.Get_size(), "tokens": args.tokens,
            "d_model": args.d_model, "max_error": max(errors),
            "verified": max(errors) <= 1e-4 * scale,
            "identical_to_simulation": all(identical_all), "seconds": seconds,
            "sent_bytes_per_rank": list(simulated.comm.sent_per_rank())}


def _parser():
    parser = argparse.ArgumentParser(description="one rank of a tensor-parallel layer over MPI")
    parser.add_argument("--layer", choices=LAYERS, required=True)
    parser.add_argument("--tokens", type=int, required=True)
    parser.add_argument("--d-model", type=int, required=True, dest="d_model")
    parser.add_argument("--heads", type=int, default=None)
    parser.add_argument("--kv-heads", type=int, default=None, dest="kv_heads")
    parser.add_argument("--causal", action="store_true")
    parser.add_argument("--bias", action="store_true")
    parser.add_argument("--seed", type=int, default=0)
    return parser


def run_on_mpi(layer, n_ranks, tokens, d_model, n_heads=None, n_kv_heads=None, causal=False,
               bias=False, seed=0, timeout=120):
    """Run the layer on ``n_ranks`` MPI processes and return rank 0's report: max_error (against
    the float64 reference), verified, identical_to_simulation, seconds (slowest rank) and
    sent_bytes_per_rank. Sizes are checked here first, so a bad request fails before launching."""
    if layer not in LAYERS:
        raise ValueError(f"layer must be one of {', '.join(LAYERS)}, got {layer!r}")
    if layer == "attention" and n_heads is None:
        raise ValueError("the attention layer needs n_heads")
    tiny = make_inputs(layer, 1, d_model, n_heads, n_kv_heads)       # one token: cheap
    _simulate(layer, tiny, n_ranks, n_heads, n_kv_heads, causal)      # raises on a bad layout
    from ..collectives.launch import mpirun
    program = ["-m", "gemmlab.parallel.mpi", "--layer", layer, "--tokens", tokens,
               "--d-model", d_model, "--seed", seed]
    program += ["--heads", n_heads] if n_heads is not None else []
    program += ["--kv-heads", n_kv_heads] if n_kv_heads is not None else []
    program += ["--causal"] if causal else []
    program += ["--bias"] if bias else []
    done = mpirun(n_ranks, program, timeout=timeout)
    lines = [line for line in done.stdout.splitlines() if line.startswith(RESULT_TAG)]
    if len(lines) != 1:
        raise RuntimeError(f"expected one {RESULT_TAG} line from the MPI job, got {len(lines)}:\n"
                           f"{done.stdout[-2000:]}")
    return json.loads(lines[0].split(" ", 1)[1])


def main(argv=None):
    from ..collectives.launch import world
    report = rank_main(world(), _parser().parse_args(argv))
    if report is not None:
        print(RESULT_TAG, json.dumps(report), flush=True)


if __name__ == "__main__":
    main()
