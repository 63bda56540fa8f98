"""Megatron's FFN and attention over MPI, one rank's side: each CPU process holds only its own
shards and the exit all-reduce is the ring of ``gemmlab.collectives.mpi_allreduce``.

``gemmlab tp --backend mpi`` (:mod:`gemmlab.parallel.tp`) starts the processes; each runs
:func:`rank_main`: it builds the same random inputs from the seed, keeps its shards, computes its
partial sum, joins the ring all-reduce, and checks its Y against the unsharded float64 reference
and against the single-process simulation (which adds in the same order, so it should match bit
for bit). ``ffn_on_rank`` and ``attention_on_rank`` take any mpi4py communicator.
"""
import numpy as np

from .attention import attention_reference, megatron_attention, rank_attention
from .ffn import ffn_reference, megatron_ffn, rank_ffn
from .tp import layer_shards, make_inputs


def ffn_on_rank(comm, X, W_up_r, W_down_r, b_down=None):
    """This rank's Y of Megatron's FFN: local GEMMs and GELU, then the ring all-reduce (MPI)."""
    from ..collectives import mpi_allreduce as ring
    _, _, P = rank_ffn(X, W_up_r, W_down_r)
    Y = ring.ring_allreduce(comm, P)
    return Y if b_down is None else Y + b_down


def attention_on_rank(comm, X, shard, causal=False, b_o=None):
    """This rank's Y of Megatron's attention for its shard (see ``attention_shards``)."""
    from ..collectives import mpi_allreduce as ring
    Y = ring.ring_allreduce(comm, rank_attention(X, shard, causal)["P"])
    return Y if b_o is None else Y + b_o


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
    shard = layer_shards(layer, inputs, comm.Get_size(), n_heads, n_kv_heads)[comm.Get_rank()]
    if layer == "ffn":
        return ffn_on_rank(comm, inputs["X"], shard["W_up"], shard["W_down"], inputs["b_down"])
    return attention_on_rank(comm, inputs["X"], shard, causal, inputs["b_o"])


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
    return {"layer": args.layer, "backend": "mpi", "n_ranks": comm.Get_size(),
            "tokens": args.tokens, "d_model": args.d_model, "max_error": max(errors),
            "verified": max(errors) <= 1e-4 * scale,
            "identical_to_simulation": all(identical_all), "seconds": seconds,
            "sent_bytes_per_rank": list(simulated.comm.sent_per_rank())}
