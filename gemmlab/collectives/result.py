"""What a simulated collective returns: every rank's output, a byte ledger and the step-by-step trace.

The trace is the ground truth of the lesson: the byte ledger is summed from it, the stepper widget
replays it, and the cost models are checked against it.
"""
from dataclasses import dataclass
from typing import NamedTuple, Optional, Union

import numpy as np

# Phases in which the receiver adds what it gets into its own data (the others only copy).
REDUCING_PHASES = frozenset({"reduce", "reduce-scatter", "exchange", "fold"})


class Transfer(NamedTuple):
    """One message: in communication round ``step``, rank ``src`` sends ``bytes`` bytes to ``dst``.

    ``chunk`` says which part of the buffer travels: an int is one chunk of the N-way split the
    algorithm uses, a ``range`` is several consecutive chunks, ``None`` is the whole buffer.
    """
    step: int
    src: int
    dst: int
    chunk: Union[int, range, None]
    phase: str
    bytes: int


@dataclass(frozen=True)
class CollectiveResult:
    """Outputs, per-rank sent and received bytes (kept separate), and the trace of one collective."""
    algorithm: str
    outputs: list
    sent_bytes: np.ndarray
    recv_bytes: np.ndarray
    steps: list

    @property
    def n_ranks(self):
        return len(self.outputs)

    @property
    def n_steps(self):
        """Number of communication rounds (messages of one round travel at the same time)."""
        return 1 + max((t.step for t in self.steps), default=-1)

    def transfers(self, step):
        """The messages of round ``step``."""
        return [t for t in self.steps if t.step == step]

    def total_bytes(self):
        """Bytes sent by all ranks together."""
        return int(self.sent_bytes.sum())

    def critical_path(self):
        """Per round, the largest bytes one rank sends or receives, and the largest it reduces.

        Under the usual single-port, full-duplex model a round costs alpha + beta * (the first)
        + gamma * (the second); ``cost.trace_time`` sums that over the rounds.
        """
        n = self.n_ranks
        moved = np.zeros((self.n_steps, 2, n), dtype=np.int64)
        reduced = np.zeros((self.n_steps, n), dtype=np.int64)
        for t in self.steps:
            moved[t.step, 0, t.src] += t.bytes
            moved[t.step, 1, t.dst] += t.bytes
            if t.phase in REDUCING_PHASES:
                reduced[t.step, t.dst] += t.bytes
        return moved.max(axis=(1, 2)), reduced.max(axis=1)

    def __repr__(self):
        return (f"CollectiveResult({self.algorithm!r}, ranks={self.n_ranks}, "
                f"steps={self.n_steps}, sent per rank={self.sent_bytes.tolist()})")


def make_result(algorithm, outputs, trace, n_ranks):
    """Build the result, summing the byte ledger from the trace so the two cannot disagree."""
    sent = np.zeros(n_ranks, dtype=np.int64)
    recv = np.zeros(n_ranks, dtype=np.int64)
    if trace:
        src, dst, nbytes = (np.array(col, dtype=np.int64) for col in
                            zip(*((t.src, t.dst, t.bytes) for t in trace), strict=True))
        np.add.at(sent, src, nbytes)
        np.add.at(recv, dst, nbytes)
    return CollectiveResult(algorithm, list(outputs), sent, recv, list(trace))


def describe_chunk(chunk: Optional[Union[int, range]]):
    """A short label for a Transfer's chunk field: "3", "2-3" or "all"."""
    if chunk is None:
        return "all"
    if isinstance(chunk, range):
        return f"{chunk.start}-{chunk.stop - 1}" if len(chunk) > 1 else str(chunk.start)
    return str(chunk)
