"""The one ring: reduce-scatter, all-gather and all-reduce written once, step by step, against
a small communicator protocol, for the simulated ranks of lab 07, MPI processes and NCCL GPUs.

The protocol (a *transport*): ``rank``, ``size`` and ``sendrecv(send, dest, recv, source)``,
which sends the array ``send`` to rank ``dest`` while receiving into the array ``recv`` (same
dtype, its size known to both ends) from rank ``source``. That is all a ring needs: every rank
sends to its right neighbour while it receives from its left one, so the pair is one call (a
send issued alone would wait for a receive its neighbour has not posted yet). The transports:
``mpi.MpiTransport`` (mpi4py's Sendrecv), ``nccl.NcclTransport`` (ncclSend and ncclRecv in one
group), the lab's simulated ranks (``RankTransport`` below) and, in the tests, threads and queues.

The step table is :class:`RingPlan`: the chunk split (np.array_split's, from
``buffers.chunk_bounds``) and, for each rank and step, which chunk it sends to whom and which it
receives from whom. Its trace is the simulated ring's trace, record for record (the simulated
ring, ``simulated.py``, moves every rank's chunk of a step at once with the plan's
:meth:`RingPlan.chunks_sent`), and its byte ledger comes from ``result.make_result``.
:func:`ring_ops` turns the plan into one rank's list of messages (:class:`RingOp`) on views of its
buffers; the ring functions walk that list (:func:`run_ops`). The arrays may be NumPy or CuPy.

Schedule (rank r, neighbours r-1 -> r -> r+1, all indices mod N): reduce-scatter step s = 0..N-2,
rank r sends chunk r-s-1 to r+1, which adds its own copy; all-gather step s, rank r sends chunk
r-s, which it holds complete, to r+1, which stores it. The reduce-scatter adds the incoming chunk
and the rank's own input in the same order everywhere, so every transport gives the same bits.
"""
import sys
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..numeric_args import whole_number
from .buffers import chunk_bounds
from .result import Transfer, make_result

PHASES = ("reduce-scatter", "all-gather")


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

    def chunks_sent(self, ranks, phase, s):
        """The chunk each of ``ranks`` (an int or a NumPy array of them) sends in step ``s`` of
        ``phase``: the step table (rank r receives what rank r-1 sends)."""
        if phase not in PHASES:
            raise ValueError(f"phase {phase!r}: expected one of {', '.join(PHASES)}")
        behind = 1 if phase == "reduce-scatter" else 0   # the reduce-scatter passes on chunk r-1
        return (ranks - s - behind) % self.n_ranks

    def steps(self, rank, phase, first_step=0):
        """Rank ``rank``'s N-1 steps of one phase, numbered from ``first_step``."""
        n = self.n_ranks
        sent = [self.chunks_sent(rank, phase, s) for s in range(n - 1)]
        received = [self.chunks_sent(rank - 1, phase, s) for s in range(n - 1)]
        return [RingStep(first_step + s, phase, sent[s], received[s], (rank + 1) % n,
                         (rank - 1) % n) for s in range(n - 1)]

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


class RankTransport:
    """A communicator whose ``sendrecv(a, dest, source)`` returns what arrived (the lab's
    simulated ranks, ``labs.ranks.RankComm``, and mpi4py's lower-case API) as a transport."""

    def __init__(self, comm):
        self.comm, self.rank, self.size = comm, comm.rank, comm.size

    def sendrecv(self, send, dest, recv, source):
        recv[...] = self.comm.sendrecv(send, dest, source)
