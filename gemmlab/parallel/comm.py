"""What the sharded layers communicate: results carrying a communication log.

The layers call the simulated collectives of :mod:`gemmlab.collectives` (ring all-reduce,
all-gather, reduce-scatter) on flattened per-rank buffers and record, for each call, which
collective ran, where in the layer, the payload per rank and the bytes each rank sent and
received, as the collective's own byte ledger counted them.
"""
from dataclasses import dataclass, field
from html import escape

import numpy as np


@dataclass(frozen=True)
class CommRecord:
    collective: str        # "all-reduce", "all-gather" or "reduce-scatter"
    where: str             # the point of the layer where it runs
    payload_bytes: int     # size of the tensor each rank contributes (S)
    sent_bytes: tuple      # per rank, as counted by the collective
    recv_bytes: tuple
    steps: int             # number of communication steps in the trace


class CommLog(list):
    """The list of :class:`CommRecord` of one layer call, with per-rank totals."""

    def collectives(self):
        return [r.collective for r in self]

    def sent_per_rank(self):
        """Bytes each rank sent over the whole call (a tuple, one entry per rank)."""
        return (tuple(int(sum(col)) for col in zip(*(r.sent_bytes for r in self), strict=True))
                if self else ())

    def recv_per_rank(self):
        return (tuple(int(sum(col)) for col in zip(*(r.recv_bytes for r in self), strict=True))
                if self else ())

    def _rows(self):
        return [(r.collective, r.where, f"{r.payload_bytes:,}", f"{max(r.sent_bytes):,}",
                 f"{max(r.recv_bytes):,}", str(r.steps)) for r in self]

    _HEADER = ("collective", "where", "payload B/rank", "sent B/rank", "received B/rank", "steps")

    def __str__(self):
        if not self:
            return "no communication"
        table = [self._HEADER] + self._rows()
        widths = [max(len(line[i]) for line in table) for i in range(len(self._HEADER))]
        return "\n".join("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip()
                         for line in table)

    def _repr_html_(self):
        if not self:
            return "<p>no communication</p>"
        head = "".join(f"<th>{escape(h)}</th>" for h in self._HEADER)
        body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>"
                       for row in self._rows())
        return f"<table><tr>{head}</tr>{body}</table>"


@dataclass
class ParallelResult:
    """A sharded layer's result: each rank's output, the communication log, and the per-rank
    intermediate tensors by name (``local["Z"][r]`` is rank r's Z_r), for the shape ledger, and
    ``info``: facts about the layout (which heads each rank owns, ...)."""
    outputs: list
    comm: CommLog
    local: dict = field(default_factory=dict)
    info: dict = field(default_factory=dict)

    def local_shapes(self, name):
        return [a.shape for a in self.local[name]]


def _collectives():
    from .. import collectives
    return collectives


def comm_record(name, where, buffers, res):
    """The :class:`CommRecord` of the collective ``name`` whose CollectiveResult is ``res``."""
    return CommRecord(name, where, int(buffers[0].nbytes), tuple(int(b) for b in res.sent_bytes),
                      tuple(int(b) for b in res.recv_bytes), res.n_steps)


def allreduce_sum(partials, where, log):
    """Sum the ranks' same-shape partial results with the ring all-reduce; every rank gets the
    sum. Appends the call to ``log`` and returns each rank's copy."""
    res = _collectives().ring_allreduce(partials)
    log.append(comm_record("all-reduce", where, partials, res))
    return list(res.outputs)


def allgather_columns(shards, where, log):
    """Concatenate the ranks' column shards (each M x n) along the columns with the ring
    all-gather; every rank gets the whole M x (p n) matrix."""
    res = _collectives().ring_allgather([S.T for S in shards])
    log.append(comm_record("all-gather", where, shards, res))
    return [np.ascontiguousarray(out.T) for out in res.outputs]


def reduce_scatter_rows(partials, where, log):
    """Sum the ranks' same-shape partial results and leave rank r with block r of the sum's rows
    (as ``np.array_split`` cuts them), as sequence parallelism does: each rank sends half of
    what an all-reduce sends."""
    res = _collectives().ring_reduce_scatter(partials)
    log.append(comm_record("reduce-scatter", where, partials, res))
    return list(res.outputs)


REDUCTIONS = ("all-reduce", "reduce-scatter")


def check_bias(name, b, width):
    """``b`` as a 1-D array of length ``width`` (or None), or a clear error."""
    if b is None:
        return None
    b = np.asarray(b)
    if b.dtype == object or b.dtype.kind not in "iuf" or b.shape != (width,):
        raise ValueError(f"{name} must be a vector of {width} real numbers (one per output "
                         f"feature), got {b.dtype} array of shape {b.shape}")
    return b


def check_reduction(reduce):
    if reduce not in REDUCTIONS:
        raise ValueError(f"reduce must be 'all-reduce' (every rank gets the whole Y) or "
                         f"'reduce-scatter' (rank r keeps block r of Y's rows), got {reduce!r}")


def reduce_partials(partials, bias, reduce, where, log, bias_before_sum=False):
    """Merge row-parallel partial sums at a layer's exit and add the bias once.

    ``bias_before_sum=True`` is the mistake of adding the whole bias to every rank's partial
    sum: the sum then holds p copies of it.
    """
    if bias is not None and bias_before_sum:
        partials = [P + bias for P in partials]
    if reduce == "all-reduce":
        outputs = allreduce_sum(partials, where, log)
    else:
        outputs = reduce_scatter_rows(partials, where, log)
    if bias is not None and not bias_before_sum:
        outputs = [Y + bias for Y in outputs]
    return outputs
