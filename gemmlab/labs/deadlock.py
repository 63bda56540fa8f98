"""Describing a stuck run of simulated ranks: who waits on whom, and why nobody can move.

The wait-for graph has one edge per waiting rank: to the rank it needs (the receiver of its
send, the sender of its recv, a rank that has not joined its collective). Following the edges
from the lowest rank ends in a cycle, or at a rank that has already returned.
"""


def _waits_in(rank, what):
    kind = what[0]
    if kind == "send":
        peer = "itself" if what[1] == rank else str(what[1])
        return f"rank {rank} waits in send to {peer}"
    if kind == "recv":
        peer = "itself" if what[1] == rank else str(what[1])
        return f"rank {rank} waits in recv from {peer}"
    if kind == "sendrecv-recv":
        return f"rank {rank} waits in sendrecv for the message from {what[1]}"
    if kind == "sendrecv-send":
        return f"rank {rank} waits in sendrecv for {what[1]} to take its message"
    return f"rank {rank} waits in {what[1].replace('-', '_')} (its collective number {what[2] + 1})"


def _why(kinds, finished_peer, loop):
    if finished_peer is not None:
        return (f"rank {finished_peer} has already returned, so nothing will ever arrive from it "
                f"or be taken by it: every send needs a matching recv on the other rank")
    if kinds == {"send"}:
        return ("every rank sends first and a rendezvous send needs its receiver, so nobody "
                "receives. Use comm.sendrecv(a, dst, src): it sends and receives in one step. "
                "(Letting even ranks send first while odd ranks receive first also ends the "
                "deadlock, but each exchange then takes two steps, and the lab asks for the "
                "ring's 2(N-1) steps)")
    if kinds <= {"recv", "sendrecv-recv"}:
        return "every rank waits to receive and no rank is sending"
    if "collective" in kinds:
        return ("the ranks do not call the same communication in the same order: a collective "
                "needs every rank, a send needs its receiver")
    if len(loop) == 1:
        return "a rank cannot complete a rendezvous with itself by a plain send or recv"
    return "each rank waits for a call the next one has not made: match every send with a recv"


def describe_deadlock(graph):
    """The wait-for cycle of a stuck run, as a sentence: who waits on whom, and why."""
    edges, finished = graph["edges"], graph["finished"]
    start = min(edges)
    order, seen = [], set()
    rank = start
    while rank in edges and rank not in seen:
        seen.add(rank)
        order.append(rank)
        rank = edges[rank][1]
    finished_peer = rank if rank in finished else None
    loop = order[order.index(rank):] if rank in seen else order
    kinds = {edges[r][0][0] for r in loop}
    chain = ", ".join(_waits_in(r, edges[r][0]) for r in (order if finished_peer is not None
                                                         else loop))
    return f"deadlock: {chain}: {_why(kinds, finished_peer, loop)}."
