"""The ring and centralized all-reduce over real processes: MPI point-to-point messages on NumPy
buffers, one process per rank (run under ``mpiexec``, see ``gemmlab.collectives.allreduce_command``).

Each function takes an mpi4py communicator and this rank's buffer and returns this rank's result;
none of them imports mpi4py itself. The ring is the one ring (``ring_steps``) over
:class:`MpiTransport`, so it follows the simulated ``ring_allreduce``'s schedule and adds in the
same order: on the same inputs both give the same bits.
"""
import numpy as np

from . import ring_steps


class MpiTransport:
    """An mpi4py communicator as the ring's transport (``ring_steps``): ``sendrecv`` is one
    MPI Sendrecv, whose two halves cannot deadlock against the neighbours'."""

    def __init__(self, comm):
        self.comm, self.rank, self.size = comm, comm.Get_rank(), comm.Get_size()

    def sendrecv(self, send, dest, recv, source):
        self.comm.Sendrecv(send, dest=dest, recvbuf=recv, source=source)


def ring_allreduce(comm, buf):
    """This rank's copy of the sum of every rank's ``buf``: reduce-scatter then all-gather."""
    return ring_steps.ring_allreduce(MpiTransport(comm), np.asarray(buf))


def ring_reduce_scatter(comm, buf):
    """Block ``rank`` of the sum over all ranks, split along axis 0 as np.array_split does (the
    same split as the simulated ``ring_reduce_scatter``)."""
    return ring_steps.ring_reduce_scatter(MpiTransport(comm), np.asarray(buf))


def ring_allgather(comm, chunk):
    """The concatenation of every rank's 1-D ``chunk`` (lengths may differ between ranks)."""
    chunk = np.ascontiguousarray(chunk).reshape(-1)
    return ring_steps.ring_allgather(MpiTransport(comm), chunk, comm.allgather(chunk.size))


def centralized_allreduce(comm, buf, root=0):
    """The root receives every buffer in rank order and adds it, then sends the sum to each rank."""
    n, rank = comm.Get_size(), comm.Get_rank()
    buf = np.ascontiguousarray(buf)
    if rank != root:
        comm.Send(buf, dest=root)
        out = np.empty_like(buf)
        comm.Recv(out, source=root)
        return out
    total, incoming = buf.copy(), np.empty_like(buf)
    for src in range(n):
        if src != root:
            comm.Recv(incoming, source=src)
            total += incoming
    for dst in range(n):
        if dst != root:
            comm.Send(total, dest=dst)
    return total


def library_allreduce(comm, buf):
    """MPI's own Allreduce (sum): the reference the hand-written algorithms are measured against."""
    buf = np.ascontiguousarray(buf)
    out = np.empty_like(buf)
    comm.Allreduce(buf, out)
    return out


ALGORITHMS = {"ring": ring_allreduce, "centralized": centralized_allreduce,
              "mpi": library_allreduce}
