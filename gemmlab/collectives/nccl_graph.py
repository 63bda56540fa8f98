"""Our ring over NCCL with the host out of the loop: one all-reduce's messages, prepared once and
recorded as a CUDA graph, replayed by each call.

Driven step by step from Python (:func:`gemmlab.collectives.nccl.ring_allreduce`), every step of
the ring pays the host: the plan and its views rebuilt, an NCCL group launched, an addition
launched, and the GPU waits for each of them when they cost more than the step's transfer. Here
the same messages (``nccl.ring_ops``, from the CPU-tested ``RingPlan``: the same algorithm,
reduce-scatter then all-gather, 2(N-1) steps of S/N) are issued once while a CUDA stream records
them into a graph; a call then launches that graph, one launch for all 2(N-1) steps, with
nothing allocated and no Python between the steps.

Large chunks travel in pieces (:func:`piece_count`): the addition of piece k runs on a second
stream while piece k+1 is in flight, so only the last piece's addition stays on the critical
path. Each send waits for the addition that produced its data (an event between the streams),
so the result is bit for bit that of the step-by-step ring.
"""
import math

from .nccl import (RingPlan, flat_view, nccl_allreduce, output_like, require_cupy,
                   ring_allreduce, ring_ops, run_ops)

PIECE_BYTES = 32 * 2**20      # a chunk larger than this travels in pieces of about this size
MAX_PIECES = 8
ALLREDUCE_ALGORITHMS = ("ring", "ring_stepwise", "nccl")
COLLECTIVES = {"nccl_reduce_scatter": "reducescatter", "nccl_allgather": "allgather"}
ALGORITHMS = ALLREDUCE_ALGORITHMS + tuple(COLLECTIVES)


def piece_count(plan, piece_bytes=PIECE_BYTES):
    """Pieces per chunk: enough that none is much larger than ``piece_bytes`` (at most
    :data:`MAX_PIECES`); 1 with ``piece_bytes`` None (whole chunks)."""
    if piece_bytes is None:
        return 1
    if piece_bytes <= 0:
        raise ValueError(f"piece_bytes={piece_bytes!r}: expected a positive size or None")
    largest = max(plan.counts) * plan.itemsize
    return max(1, min(MAX_PIECES, math.ceil(largest / piece_bytes)))


class RingGraph:
    """A list of ring messages (``nccl.RingOp``) recorded once as a CUDA graph; calling the object
    replays it on the current stream and returns ``out``.

    ``copy``: a (source, destination) pair copied first (a one-rank all-reduce has no messages).
    Every rank must build its RingGraph at the same point of its program: the constructor runs
    the messages once eagerly (NCCL connects the peers, CuPy compiles the addition) before it
    records them.
    """

    def __init__(self, transport, ops, out, copy=None):
        self.cupy, _ = require_cupy()
        self.transport, self.ops, self.out, self.copy = transport, list(ops), out, copy
        self.pieces = 1 + max((op.piece for op in self.ops), default=0)
        self._copy()
        run_ops(transport, self.ops)
        self.graph = self._record()

    def _copy(self):
        if self.copy is not None:
            self.copy[1][...] = self.copy[0]

    def _record(self):
        cupy = self.cupy
        main = cupy.cuda.Stream(non_blocking=True)      # capture needs a stream of its own
        side = cupy.cuda.Stream(non_blocking=True) if self.pieces > 1 else main
        self._streams = (main, side)
        with main:
            main.begin_capture()
            try:
                self._issue(main, side)
            except BaseException:
                _end_quietly(main)      # the capture is broken anyway; report the first error
                raise
            return main.end_capture()

    def _issue(self, main, side):
        """Queue the messages on ``main``; with pieces, each addition on ``side`` after its piece
        arrived, and each send after the addition that produced its data."""
        cupy = self.cupy
        arrived = [cupy.cuda.Event(disable_timing=True) for _ in range(self.pieces)]
        added = [cupy.cuda.Event(disable_timing=True) for _ in range(self.pieces)]
        adding = [False] * self.pieces
        self._copy()
        for op in self.ops:
            k = op.piece
            if adding[k]:
                main.wait_event(added[k])
                adding[k] = False
            self.transport.sendrecv(op.send, op.dest, op.recv, op.source)
            if op.addend is None:
                continue
            if side is main:
                cupy.add(op.recv, op.addend, out=op.recv)
                continue
            arrived[k].record(main)
            side.wait_event(arrived[k])
            with side:
                cupy.add(op.recv, op.addend, out=op.recv)
            added[k].record(side)
            adding[k] = True
        for k in range(self.pieces):           # the side stream joins back before the end
            if adding[k]:
                main.wait_event(added[k])

    def __call__(self):
        self.graph.launch(self.cupy.cuda.get_current_stream())
        return self.out


def _end_quietly(stream):
    try:
        stream.end_capture()
    except Exception:           # noqa: BLE001 - only the error that broke the capture matters
        pass


def graph_ring(transport, buf, out=None, piece_bytes=PIECE_BYTES):
    """Our ring all-reduce of ``buf`` into ``out`` (allocated when None) as a :class:`RingGraph`:
    each call sums every rank's ``buf`` into ``out`` again."""
    flat = flat_view(buf)
    out = output_like(buf, out)
    plan = RingPlan.split(transport.size, flat.size, flat.itemsize)
    ops = ring_ops(plan, transport.rank, plan.views(flat), plan.views(out.reshape(-1)),
                   piece_count(plan, piece_bytes)) if transport.size > 1 else []
    return RingGraph(transport, ops, out, copy=(flat, out.reshape(-1)) if not ops else None)


def allreduce_program(name, transport, buf, out):
    """A call that sums every rank's ``buf`` into ``out`` each time: ``ring`` (our ring as a CUDA
    graph), ``ring_stepwise`` (our ring driven step by step from Python), ``nccl`` (NCCL's own
    allReduce). Every rank builds the same program at the same point."""
    if name == "ring":
        return graph_ring(transport, buf, out)
    if name == "ring_stepwise":
        return lambda: ring_allreduce(transport, buf, out)
    if name == "nccl":
        return lambda: nccl_allreduce(transport, buf, out)
    raise ValueError(f"all-reduce {name!r}: expected one of {', '.join(ALLREDUCE_ALGORITHMS)}")
