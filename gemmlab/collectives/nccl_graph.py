"""Our ring over NCCL with the host out of the loop: one all-reduce's steps, prepared once and
recorded as a CUDA graph, replayed by each call.

Driven step by step from Python (:func:`gemmlab.collectives.ring_steps.ring_allreduce`), each call
rebuilds the plan and its views, and each step launches an NCCL group and an addition from
Python; on two H200s that host work, not the GPU, set the pace below about 64 MiB (about 150 us
per step measured, against 9 us of GPU work: ``benchmarks/nccl_h200x2_breakdown.json``). Here the
same steps (``ring_steps.ring_ops``, from the CPU-tested ``RingPlan``: the same algorithm,
reduce-scatter then all-gather, 2(N-1) steps of S/N, each addition after its step on one stream)
are issued once while a CUDA stream records them into a graph; a call then launches that graph:
one launch for all 2(N-1) steps, nothing allocated, no Python between the steps, and the result
bit for bit that of the step-by-step ring.

Cutting each chunk into pieces, so that the addition of one piece runs on a second stream while
the next piece travels, was tried on two H200s and measured slower at every size tried, 16 MiB
to 1 GiB (the addition competes with NCCL's copy for the GPU: ``benchmarks/RESULTS.md``), so the
steps travel whole.
"""
from .nccl import nccl_allreduce, require_cupy
from .ring_steps import RingPlan, flat_view, output_like, ring_allreduce, ring_ops, run_ops
from .nvlink_ring import NvlinkRing

ALLREDUCE_ALGORITHMS = ("ring", "ring_stepwise", "ring_nvlink", "nccl")
COLLECTIVES = {"nccl_reduce_scatter": "reducescatter", "nccl_allgather": "allgather"}
ALGORITHMS = ALLREDUCE_ALGORITHMS + tuple(COLLECTIVES)


class RingGraph:
    """A rank's ring steps (``ring_steps.RingOp``) recorded once as a CUDA graph; calling the object
    replays them on the current stream and returns ``out``.

    ``copy``: a (source, destination) pair copied first (a one-rank all-reduce has no steps).
    Every rank must build its RingGraph at the same point of its program: the constructor runs
    the steps once eagerly (NCCL connects the peers, CuPy compiles the addition) before it
    records them. Drop every RingGraph before the communicator is closed: NCCL's destroy waits
    for the graphs that hold its operations, so closing with one still alive never returns (seen
    on two H200s with NCCL 2.28).
    """

    def __init__(self, transport, ops, out, copy=None):
        self.cupy, _ = require_cupy()
        self.transport, self.ops, self.out, self.copy = transport, list(ops), out, copy
        self._issue()
        self.graph = self._record()

    def _issue(self):
        """Queue the copy and the steps on the current stream (each addition after its step)."""
        if self.copy is not None:
            self.copy[1][...] = self.copy[0]
        run_ops(self.transport, self.ops)

    def _record(self):
        stream = self.cupy.cuda.Stream(non_blocking=True)   # capture needs a stream of its own
        with stream:
            stream.begin_capture()
            try:
                self._issue()
            except BaseException:
                _end_quietly(stream)    # the capture is broken anyway; report the first error
                raise
            return stream.end_capture()

    def __call__(self):
        self.graph.launch(self.cupy.cuda.get_current_stream())
        return self.out

    def close(self):
        """Drop the graph (and with it the NCCL operations it holds)."""
        self.graph = None


def _end_quietly(stream):
    try:
        stream.end_capture()
    except Exception:           # noqa: BLE001 - only the error that broke the capture matters
        pass


def graph_ring(transport, buf, out=None):
    """Our ring all-reduce of ``buf`` into ``out`` (allocated when None) as a :class:`RingGraph`:
    each call sums every rank's ``buf`` into ``out`` again."""
    flat = flat_view(buf)
    out = output_like(buf, out)
    if transport.size == 1:
        return RingGraph(transport, [], out, copy=(flat, out.reshape(-1)))
    plan = RingPlan.split(transport.size, flat.size, flat.itemsize)
    return RingGraph(transport, ring_ops(plan, transport.rank, plan.views(flat),
                                         plan.views(out.reshape(-1))), out)


def allreduce_program(name, transport, buf, out):
    """A call that sums every rank's ``buf`` into ``out`` each time: ``ring`` (our ring as a CUDA
    graph), ``ring_stepwise`` (our ring driven step by step from Python), ``ring_nvlink`` (our ring
    reading the peer's memory, the addition inside the transfer), ``nccl`` (NCCL's own allReduce).
    Every rank builds the same program at the same point, and hands it to :func:`close_program`
    at the same point when done."""
    if name == "ring":
        return graph_ring(transport, buf, out)
    if name == "ring_nvlink":
        return NvlinkRing(transport, buf, out)
    if name == "ring_stepwise":
        return lambda: ring_allreduce(transport, buf, out)
    if name == "nccl":
        return lambda: nccl_allreduce(transport, buf, out)
    raise ValueError(f"all-reduce {name!r}: expected one of {', '.join(ALLREDUCE_ALGORITHMS)}")


def close_program(program):
    """Release what a program of :func:`allreduce_program` holds (a CUDA graph of NCCL operations,
    a peer's mapped memory) before its buffers or the communicator go; every rank calls it at the
    same point, since unmapping a peer's memory ends with the ranks meeting."""
    close = getattr(program, "close", None)
    if close is not None:
        close()
