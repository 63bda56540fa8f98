"""The ring reduce-scatter, all-gather and all-reduce between GPUs over NCCL point-to-point
send/recv, next to NCCL's own allReduce, reduceScatter and allGather as the reference.

Design: one process per GPU. ``gemmlab allreduce --backend nccl --np N`` starts N processes with
the one launcher (``gemmlab.collectives.jobs``); rank 0 creates the NCCL unique id and broadcasts
it over MPI, and each process joins the communicator on its own GPU (its rank on the node). This
module is the rank's side only; the parent's side is ``gemmlab.collectives.allreduce_command``. This is
how training frameworks run, and it keeps the host side of the ring honest: each process issues
only its own GPU's sends, receives and additions, so the Python cost of a step does not grow with
N as it would if one process drove every GPU in turn.

The ring itself is not here: :mod:`gemmlab.collectives.ring_steps` is the one ring, written once
against any transport with ``rank``, ``size`` and ``sendrecv(send, dest, recv, source)``, and
tested on the CPU. :class:`NcclTransport` is that transport over NCCL: its ``sendrecv`` is an
ncclSend and an ncclRecv in one group (``nccl_graph`` records the same steps as a CUDA graph
instead, so the host leaves the loop).

NVLink multicast (NVLS) stays off: :func:`connect` sets ``NCCL_NVLS_ENABLE=0`` before NCCL
creates a communicator, and the launcher puts it in every rank's environment.
"""
import os

from ..numeric_args import whole_number
from .jobs import NVLS_OFF
from .ring_steps import array_module, flat_view, output_like

_NCCL_TYPES = {"float16": "NCCL_FLOAT16", "float32": "NCCL_FLOAT32", "float64": "NCCL_FLOAT64",
               "int32": "NCCL_INT32", "int64": "NCCL_INT64"}


class BackendUnavailable(RuntimeError):
    """The NCCL backend cannot run here: no CuPy, no NCCL library, or fewer GPUs than ranks."""


def require_cupy():
    """CuPy and its NCCL bindings (``cupy.cuda.nccl``), or BackendUnavailable saying what is
    missing and what runs without them."""
    try:
        import cupy
        from cupy.cuda import nccl
    except ImportError as err:
        raise BackendUnavailable(
            f"the NCCL backend needs CuPy with NCCL on a machine with NVIDIA GPUs ({err}). "
            f"Install the pair matching the driver's CUDA, e.g. `pip install cupy-cuda13x "
            f"nvidia-nccl-cu13`. Without GPUs, use --backend mpi or the simulated ring "
            f"(gemmlab.collectives.ring_allreduce).") from None
    if not getattr(nccl, "available", False):
        raise BackendUnavailable("CuPy is installed but could not load the NCCL library; "
                                 "install nvidia-nccl-cu13 (or -cu12, to match CuPy's CUDA)")
    return cupy, nccl


def visible_gpus():
    """How many GPUs this process sees (CUDA_VISIBLE_DEVICES applies); 0 if none."""
    cupy, _ = require_cupy()
    try:
        return cupy.cuda.runtime.getDeviceCount()
    except cupy.cuda.runtime.CUDARuntimeError:
        return 0


def check_gpu_count(n_ranks, found):
    """Raise unless ``found`` GPUs are enough for ``n_ranks`` ranks, one GPU each."""
    n_ranks = whole_number("n_ranks (the number of GPUs)", n_ranks)
    if n_ranks > found:
        raise BackendUnavailable(
            f"--np {n_ranks} needs {n_ranks} GPUs, found {found} "
            f"(CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES', 'unset')}); an NCCL "
            f"communicator holds one rank per GPU, so ask for at most {found}")


def nccl_allreduce(transport, buf, out=None):
    """NCCL's own allReduce (sum) of ``buf`` into ``out`` (allocated when None): the reference."""
    out = output_like(buf, out)
    transport.allreduce(flat_view(buf), out.reshape(-1))
    return out


def _equal_rows(transport, buf, what):
    if buf.ndim == 0 or buf.shape[0] % transport.size:
        raise ValueError(f"NCCL's {what} gives every rank the same number of rows: axis 0 of the "
                         f"buffer ({buf.shape}) must divide by the {transport.size} ranks; our "
                         f"ring has no such limit")


def nccl_reduce_scatter(transport, buf):
    """NCCL's own reduceScatter: block ``rank`` of the sum (axis 0 must divide by N)."""
    _equal_rows(transport, buf, "reduceScatter")
    out = array_module(buf).empty((buf.shape[0] // transport.size,) + buf.shape[1:], buf.dtype)
    transport.reduce_scatter(flat_view(buf), out.reshape(-1))
    return out


def nccl_allgather(transport, chunk):
    """NCCL's own allGather: every rank's equally long ``chunk`` concatenated along axis 0."""
    chunk = chunk.reshape(1) if chunk.ndim == 0 else chunk
    out = array_module(chunk).empty((transport.size * chunk.shape[0],) + chunk.shape[1:],
                                    chunk.dtype)
    transport.allgather(flat_view(chunk), out.reshape(-1))
    return out


class NcclTransport:
    """One rank's end of an NCCL communicator, on CuPy arrays of this process's GPU; every call
    goes on the current CuPy stream, so it is ordered with the additions around it."""

    def __init__(self, comm, rank, size):
        self.cupy, self.nccl = require_cupy()
        self.comm, self.rank, self.size = comm, rank, size

    def _type(self, dtype):
        if dtype.name not in _NCCL_TYPES:
            raise TypeError(f"NCCL has no type for {dtype}; expected one of "
                            f"{', '.join(_NCCL_TYPES)}")
        return getattr(self.nccl, _NCCL_TYPES[dtype.name])

    def _stream(self):
        return self.cupy.cuda.get_current_stream().ptr

    def sendrecv(self, send, dest, recv, source):
        """Send ``send`` to rank ``dest`` while receiving ``recv`` from rank ``source``, in one
        NCCL group: on a ring every rank sends and receives at once, so a send issued alone would
        wait for a receive its neighbour has not posted yet. Empty messages are skipped (both
        ends compute the same size)."""
        stream = self._stream()
        self.nccl.groupStart()
        try:
            if send.size:
                self.comm.send(send.data.ptr, send.size, self._type(send.dtype), dest, stream)
            if recv.size:
                self.comm.recv(recv.data.ptr, recv.size, self._type(recv.dtype), source, stream)
        finally:
            self.nccl.groupEnd()

    def allreduce(self, send, recv):
        self.comm.allReduce(send.data.ptr, recv.data.ptr, send.size, self._type(send.dtype),
                            self.nccl.NCCL_SUM, self._stream())

    def reduce_scatter(self, send, recv):
        self.comm.reduceScatter(send.data.ptr, recv.data.ptr, recv.size, self._type(send.dtype),
                                self.nccl.NCCL_SUM, self._stream())

    def allgather(self, send, recv):
        self.comm.allGather(send.data.ptr, recv.data.ptr, send.size, self._type(send.dtype),
                            self._stream())

    def close(self):
        """Destroy the communicator (after the GPU work that uses it has finished, and after every
        ``nccl_graph.RingGraph`` recorded on it is gone: NCCL waits for them)."""
        self.cupy.cuda.get_current_stream().synchronize()
        self.comm.destroy()


def connect(mpi_comm=None):
    """This process's :class:`NcclTransport`, on its own GPU.

    With an mpi4py communicator: one rank per process, on the GPU numbered by the process's rank
    on its node; rank 0 makes the NCCL unique id and broadcasts it over MPI. Without one: a
    one-rank communicator on the current GPU, which is all a single GPU allows.
    """
    os.environ.update(NVLS_OFF)          # NCCL reads it when the communicator is created
    cupy, nccl = require_cupy()
    if mpi_comm is None:
        rank, size = 0, 1
    else:
        from mpi4py import MPI
        rank, size = mpi_comm.Get_rank(), mpi_comm.Get_size()
        node = mpi_comm.Split_type(MPI.COMM_TYPE_SHARED)
        check_gpu_count(node.Get_size(), visible_gpus())
        cupy.cuda.Device(node.Get_rank()).use()
    uid = nccl.get_unique_id() if rank == 0 else None
    if mpi_comm is not None:
        uid = mpi_comm.bcast(uid, root=0)
    return NcclTransport(nccl.NcclCommunicator(size, uid, rank), rank, size)
