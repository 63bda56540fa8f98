"""The ring and centralized all-reduce over real processes: MPI point-to-point messages on NumPy
buffers, one process per rank (run under ``mpiexec``, see ``gemmlab.collectives.launch``).

Each function takes an mpi4py communicator and this rank's buffer and returns this rank's result;
none of them imports mpi4py itself. The ring follows the same schedule as the simulated
``ring_allreduce`` (rank r sends chunk r-s-1, then r-s, to r+1), and adds in the same order, so
on the same inputs both give the same bits.
"""
import numpy as np

from .buffers import chunk_bounds


def _chunks(flat, n, row_items=1):
    """n consecutive views of ``flat`` that split its rows (of ``row_items`` values) as
    np.array_split does."""
    bounds = chunk_bounds(flat.size // max(row_items, 1), n) * row_items
    return [flat[bounds[c]:bounds[c + 1]] for c in range(n)]


def _ring_reduce_scatter_inplace(comm, chunks):
    """N-1 Sendrecv steps; afterwards chunks[rank] holds the sum over all ranks."""
    n, rank = comm.Get_size(), comm.Get_rank()
    right, left = (rank + 1) % n, (rank - 1) % n
    incoming = np.empty(max(c.size for c in chunks), dtype=chunks[0].dtype)
    for s in range(n - 1):
        send, recv = (rank - s - 1) % n, (rank - s - 2) % n
        got = incoming[:chunks[recv].size]
        comm.Sendrecv(chunks[send], dest=right, recvbuf=got, source=left)
        np.add(chunks[recv], got, out=chunks[recv])


def _ring_allgather_inplace(comm, chunks):
    """N-1 Sendrecv steps; each rank starts with chunks[rank] and ends with all of them."""
    n, rank = comm.Get_size(), comm.Get_rank()
    right, left = (rank + 1) % n, (rank - 1) % n
    for s in range(n - 1):
        send, recv = (rank - s) % n, (rank - s - 1) % n
        comm.Sendrecv(chunks[send], dest=right, recvbuf=chunks[recv], source=left)


def ring_allreduce(comm, buf):
    """This rank's copy of the sum of every rank's ``buf``: reduce-scatter then all-gather."""
    out = np.array(buf, order="C")          # a private copy: the input is left untouched
    chunks = _chunks(out.reshape(-1), comm.Get_size())
    _ring_reduce_scatter_inplace(comm, chunks)
    _ring_allgather_inplace(comm, chunks)
    return out


def ring_reduce_scatter(comm, buf):
    """Block ``rank`` of the sum over all ranks, split along axis 0 as np.array_split does (the
    same split as the simulated ``ring_reduce_scatter``)."""
    arr = np.array(buf, order="C")
    if arr.ndim == 0:
        raise ValueError("ring_reduce_scatter splits axis 0 of the buffer; got a scalar")
    row_items = int(np.prod(arr.shape[1:], dtype=np.int64))
    chunks = _chunks(arr.reshape(-1), comm.Get_size(), row_items)
    _ring_reduce_scatter_inplace(comm, chunks)
    return chunks[comm.Get_rank()].reshape((-1,) + arr.shape[1:]).copy()


def ring_allgather(comm, chunk):
    """The concatenation of every rank's 1-D ``chunk`` (lengths may differ between ranks)."""
    chunk = np.ascontiguousarray(chunk).reshape(-1)
    sizes = comm.allgather(chunk.size)
    out = np.empty(sum(sizes), dtype=chunk.dtype)
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    chunks = [out[bounds[c]:bounds[c + 1]] for c in range(len(sizes))]
    chunks[comm.Get_rank()][:] = chunk
    _ring_allgather_inplace(comm, chunks)
    return out


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
