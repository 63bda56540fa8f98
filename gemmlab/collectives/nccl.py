"""The ring reduce-scatter, all-gather and all-reduce between GPUs over NCCL point-to-point
send/recv, next to NCCL's own allReduce, reduceScatter and allGather as the reference.

Design: one process per GPU. ``gemmlab allreduce --backend nccl --np N`` starts N processes with
the one launcher (``gemmlab.collectives.jobs``); rank 0 creates the NCCL unique id and broadcasts
it over MPI, and each process joins the communicator on its own GPU (its rank on the node). This
module is the rank's side only; the parent's side is ``gemmlab.collectives.launch``. This is
how training frameworks run, and it keeps the host side of the ring honest: each process issues
only its own GPU's sends, receives and additions, so the Python cost of a step does not grow with
N as it would if one process drove every GPU in turn.

What runs without a GPU. :class:`RingPlan` is plain Python: the chunk split (np.array_split's,
from ``buffers.chunk_bounds``), and for each rank and step which chunk it sends to whom and which
it receives from whom. Its trace is the simulated ring's trace, record for record, and its byte
ledger comes from ``result.make_result``. :func:`ring_ops` turns the plan into one rank's list of
messages (:class:`RingOp`) on views of its buffers; the ring functions walk that list and call
``transport.sendrecv(send, dest, recv, source)`` for each (``nccl_graph`` records the same list
as a CUDA graph instead, so the host leaves the loop). The NCCL-specific part
is :class:`NcclTransport`, which makes that call an ncclSend and an ncclRecv in one group. Any
object with ``rank``, ``size`` and ``sendrecv`` can stand in for it (the tests use threads and
queues over NumPy arrays), so the same ring code is tested on the CPU.

NVLink multicast (NVLS) stays off: :func:`connect` sets ``NCCL_NVLS_ENABLE=0`` before NCCL
creates a communicator, and the launcher puts it in every rank's environment.
"""
import os
import sys
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..perfmodel._checks import whole_number
from .buffers import chunk_bounds
from .jobs import NVLS_OFF
from .result import Transfer, make_result

PHASES = ("reduce-scatter", "all-gather")
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


class RingStep(NamedTuple):
    """One rank's part of one ring step: send chunk ``send`` to rank ``dest`` while receiving
    chunk ``recv`` from rank ``source`` (added to its own copy in the reduce-scatter, stored in
    the all-gather)."""
    step: int
    phase: str
    send: int
    recv: int
    dest: int
    source: int


@dataclass(frozen=True)
class RingPlan:
    """The ring's chunks and schedule for N ranks: ``counts[c]`` items in chunk c, which ends up
    summed on rank c after the reduce-scatter; ``itemsize`` bytes per item.

    Reduce-scatter step s: rank r sends chunk r-s-1 to r+1 and receives chunk r-s-2 from r-1.
    All-gather step s: rank r sends chunk r-s and receives chunk r-s-1 (all indices mod N).
    """
    counts: tuple
    itemsize: int

    @classmethod
    def split(cls, n_ranks, n_rows, itemsize, row_items=1):
        """The plan for buffers of ``n_rows`` rows of ``row_items`` items, cut into N chunks of
        whole rows as ``np.array_split`` cuts them (the simulated ring's split)."""
        n_ranks = whole_number("n_ranks (the number of ranks)", n_ranks)
        rows = np.diff(chunk_bounds(int(n_rows), n_ranks))
        return cls(tuple(int(k) * int(row_items) for k in rows), int(itemsize))

    @property
    def n_ranks(self):
        return len(self.counts)

    @property
    def offsets(self):
        """Where each chunk starts in the flat buffer, in items, and where the last one ends."""
        return tuple(int(o) for o in np.concatenate([[0], np.cumsum(self.counts, dtype=np.int64)]))

    def views(self, flat):
        """The N chunks of a 1-D buffer (NumPy or CuPy) as views, in chunk order."""
        if flat.ndim != 1 or flat.size != self.offsets[-1]:
            raise ValueError(f"the plan covers a 1-D buffer of {self.offsets[-1]} items, got "
                             f"shape {flat.shape}")
        o = self.offsets
        return [flat[o[c]:o[c + 1]] for c in range(self.n_ranks)]

    def steps(self, rank, phase, first_step=0):
        """Rank ``rank``'s N-1 steps of one phase, numbered from ``first_step``."""
        if phase not in PHASES:
            raise ValueError(f"phase {phase!r}: expected one of {', '.join(PHASES)}")
        n = self.n_ranks
        behind = 1 if phase == "reduce-scatter" else 0   # the reduce-scatter passes on chunk r-1
        return [RingStep(first_step + s, phase, (rank - s - behind) % n,
                         (rank - s - behind - 1) % n, (rank + 1) % n, (rank - 1) % n)
                for s in range(n - 1)]

    def schedule(self, rank, phases=PHASES):
        """Rank ``rank``'s steps over several phases, numbered on from one phase to the next
        (an all-reduce: reduce-scatter steps 0..N-2, then all-gather steps N-1..2N-3)."""
        steps = []
        for phase in phases:
            steps += self.steps(rank, phase, first_step=len(steps))
        return steps

    def trace(self, phases=PHASES):
        """Every rank's messages as Transfer records, step by step and within a step by rank,
        the order of the simulated ring's trace."""
        by_rank = [self.schedule(r, phases) for r in range(self.n_ranks)]
        return [Transfer(s.step, r, s.dest, s.send, s.phase, self.counts[s.send] * self.itemsize)
                for steps in zip(*by_rank, strict=True) for r, s in enumerate(steps)]

    def result(self, algorithm, outputs, phases=PHASES):
        """A CollectiveResult holding ``outputs`` with the plan's trace and byte ledger."""
        return make_result(algorithm, outputs, self.trace(phases), self.n_ranks)


class RingOp(NamedTuple):
    """One step of a rank's ring run on its buffers: send ``send`` to rank ``dest`` while
    receiving ``recv`` from rank ``source``, then, in the reduce-scatter, add ``addend`` (the
    rank's own input for the chunk that arrived) into ``recv``; ``addend`` is None in the
    all-gather."""
    step: int
    phase: str
    send: object
    dest: int
    recv: object
    source: int
    addend: object


def ring_ops(plan, rank, src, dst, phases=PHASES):
    """Rank ``rank``'s steps over ``phases`` (the plan's schedule) as :class:`RingOp` on views.

    ``src`` and ``dst`` are the plan's chunk views of the input and of a separate output (the same
    views for an in-place all-gather). The first reduce-scatter step sends from the input; every
    later step passes on what arrived in the step before, so after the reduce-scatter ``dst[rank]``
    holds chunk ``rank`` summed over all ranks, and after the all-gather every chunk.
    """
    ops = []
    for s in plan.schedule(rank, phases):
        reducing = s.phase == "reduce-scatter"
        send = (src if reducing and s.step == 0 else dst)[s.send]
        ops.append(RingOp(s.step, s.phase, send, s.dest, dst[s.recv], s.source,
                          src[s.recv] if reducing else None))
    return ops


def run_ops(transport, ops):
    """Walk the messages from Python, one at a time: each ``transport.sendrecv`` call, then the
    addition into what arrived (an operation queued after it on the same stream)."""
    for op in ops:
        transport.sendrecv(op.send, op.dest, op.recv, op.source)
        if op.addend is not None:
            array_module(op.recv).add(op.recv, op.addend, out=op.recv)


def array_module(a):
    """numpy or cupy, whichever ``a`` belongs to, to make new arrays beside it."""
    name = type(a).__module__.split(".")[0]
    if name not in ("numpy", "cupy"):
        raise TypeError(f"expected a NumPy or CuPy array, got {type(a).__name__}")
    return sys.modules[name]


def flat_view(buf):
    """A contiguous 1-D view (or copy) of ``buf``."""
    return array_module(buf).ascontiguousarray(buf).reshape(-1)


def output_like(buf, out):
    """``out`` checked as a separate C-contiguous array of buf's shape and dtype, or a new one."""
    xp = array_module(buf)
    if out is None:
        return xp.empty(buf.shape, dtype=buf.dtype)
    if out.shape != buf.shape or out.dtype != buf.dtype or not out.flags.c_contiguous:
        raise ValueError(f"out must be a C-contiguous {buf.dtype} array of shape {buf.shape}, got "
                         f"a {out.dtype} array of shape {out.shape}")
    if xp.may_share_memory(out, buf):
        raise ValueError("out must not share memory with the input: the ring reads the input "
                         "while it fills the output")
    return out


def ring_allreduce(transport, buf, out=None):
    """This rank's copy of the sum of every rank's ``buf``: our ring (reduce-scatter then
    all-gather, 2(N-1) steps) over ``transport``, driven step by step from Python. ``buf`` is left
    untouched; the sum goes to ``out`` (allocated when None) and is returned."""
    flat = flat_view(buf)
    out = output_like(buf, out)
    if transport.size == 1:
        out[...] = buf
        return out
    plan = RingPlan.split(transport.size, flat.size, flat.itemsize)
    run_ops(transport, ring_ops(plan, transport.rank, plan.views(flat),
                                plan.views(out.reshape(-1))))
    return out


def ring_reduce_scatter(transport, buf):
    """Block ``rank`` of the sum over all ranks, its rows cut from axis 0 as np.array_split cuts
    them (the simulated ``ring_reduce_scatter``'s blocks)."""
    if buf.ndim == 0:
        raise ValueError("ring_reduce_scatter splits axis 0 of the buffer; got a scalar")
    flat = flat_view(buf)
    row_items = flat.size // buf.shape[0] if buf.shape[0] else 0
    plan = RingPlan.split(transport.size, buf.shape[0], flat.itemsize, row_items)
    work = flat.copy()          # one rank alone: its block is its whole input
    run_ops(transport, ring_ops(plan, transport.rank, plan.views(flat), plan.views(work),
                                phases=("reduce-scatter",)))
    return plan.views(work)[transport.rank].reshape((-1,) + buf.shape[1:]).copy()


def ring_allgather(transport, chunk, lengths=None):
    """Every rank's ``chunk`` concatenated along axis 0. ``lengths[r]`` is rank r's length along
    axis 0 (None: all as long as this rank's); the other dimensions must agree."""
    chunk = chunk.reshape(1) if chunk.ndim == 0 else chunk
    lengths = [chunk.shape[0]] * transport.size if lengths is None else [int(k) for k in lengths]
    if len(lengths) != transport.size or lengths[transport.rank] != chunk.shape[0]:
        raise ValueError(f"lengths={lengths}: expected one length per rank ({transport.size}), "
                         f"with this rank's ({transport.rank}) equal to its chunk's "
                         f"{chunk.shape[0]} rows")
    row_items = int(np.prod(chunk.shape[1:], dtype=np.int64))
    plan = RingPlan(tuple(k * row_items for k in lengths), chunk.itemsize)
    out = array_module(chunk).empty((sum(lengths),) + chunk.shape[1:], dtype=chunk.dtype)
    chunks = plan.views(out.reshape(-1))
    chunks[transport.rank][...] = flat_view(chunk)
    run_ops(transport, ring_ops(plan, transport.rank, chunks, chunks, phases=("all-gather",)))
    return out


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
