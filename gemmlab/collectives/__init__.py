"""Collective communication: simulated ranks with a per-step trace and byte ledger, cost models,
and the same ring algorithms over MPI (``gemmlab.collectives.mpi_allreduce``, imported only when used).

    res = gl.collectives.ring_allreduce([x0, x1, x2, x3])
    res.outputs          # every rank's copy of x0 + x1 + x2 + x3
    res.sent_bytes       # per-rank bytes sent (res.recv_bytes: received)
    res.steps            # Transfer(step, src, dst, chunk, phase, bytes) records
"""
from .cost import (ALGORITHMS, Cost, algbw, allreduce_cost, allreduce_time, bus_factor, busbw,
                   centralized_root_bytes, double_binary_tree_cost, ring_send_bytes, trace_time)
from .doubling import rabenseifner_allreduce, recursive_doubling_allreduce, tree_allreduce
from .result import CollectiveResult, Transfer
from .simulated import centralized_allreduce, ring_allgather, ring_allreduce, ring_reduce_scatter

ALLREDUCE = {
    "centralized": centralized_allreduce,
    "ring": ring_allreduce,
    "tree": tree_allreduce,
    "recursive_doubling": recursive_doubling_allreduce,
    "rabenseifner": rabenseifner_allreduce,
}


def allreduce(buffers, algorithm="ring"):
    """Sum-all-reduce ``buffers`` (one array per rank) with the named algorithm (see ALLREDUCE)."""
    if algorithm not in ALLREDUCE:
        raise ValueError(f"unknown all-reduce algorithm {algorithm!r}; expected one of "
                         f"{', '.join(ALLREDUCE)}")
    return ALLREDUCE[algorithm](buffers)


__all__ = [
    "ring_allreduce", "ring_reduce_scatter", "ring_allgather", "centralized_allreduce",
    "tree_allreduce", "recursive_doubling_allreduce", "rabenseifner_allreduce", "allreduce",
    "ALLREDUCE", "ALGORITHMS", "CollectiveResult", "Transfer", "Cost", "allreduce_cost",
    "allreduce_time", "trace_time", "ring_send_bytes", "centralized_root_bytes", "bus_factor",
    "algbw", "busbw", "double_binary_tree_cost",
]
