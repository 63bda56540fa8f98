"""Alpha-beta(-gamma) cost models of all-reduce algorithms, and nccl-tests' bandwidth convention.

A message of ``m`` bytes costs ``alpha + m * beta`` (alpha: fixed start-up latency in seconds,
beta: seconds per byte, i.e. 1 / bandwidth), and reducing ``m`` bytes costs ``m * gamma``. Each
rank sends one and receives one message at a time, both directions at once (single port, full
duplex). An algorithm's time is then ``steps * alpha + bytes * beta + reduce_bytes * gamma``,
where the three counts follow its critical path; :func:`allreduce_cost` gives them in closed form
and :func:`trace_time` measures them on a simulated run, so the two can be checked against each
other.
"""
import math
import numbers
from dataclasses import dataclass

from ..numeric_args import whole_number

ALGORITHMS = ("centralized", "ring", "tree", "recursive_doubling", "rabenseifner")


@dataclass(frozen=True)
class Cost:
    """The latency count, the bytes moved and the bytes reduced on an algorithm's critical path."""
    algorithm: str
    n_ranks: int
    size_bytes: float
    steps: int
    bytes: float
    reduce_bytes: float

    def time(self, alpha, beta, gamma=0.0):
        """Seconds under the model: steps * alpha + bytes * beta + reduce_bytes * gamma."""
        return self.steps * alpha + self.bytes * beta + self.reduce_bytes * gamma


def _check(n, size_bytes):
    """n as a Python int, after checking n and size_bytes make sense."""
    n = whole_number("n_ranks (the number of ranks)", n)
    if not isinstance(size_bytes, numbers.Real) or size_bytes < 0:
        raise ValueError(f"size_bytes={size_bytes!r}: expected a size in bytes >= 0")
    return n


def allreduce_cost(algorithm, n, size_bytes):
    """Closed-form critical-path counts of an all-reduce of ``size_bytes`` per rank on n ranks.

    centralized         2(N-1) steps, 2(N-1) S bytes (all at the root), (N-1) S reduced
    ring                2(N-1) steps, 2(N-1)/N S bytes, (N-1)/N S reduced
    tree (binomial)     2 ceil(log2 N) steps of S bytes, ceil(log2 N) S reduced; not pipelined,
                        unlike NCCL's trees (see :func:`double_binary_tree_cost`)
    recursive_doubling  log2 P steps of S bytes (P = largest power of two <= N), plus a fold and
                        an unfold step when N is not a power of two
    rabenseifner        2 log2 P steps, 2(P-1)/P S bytes, (P-1)/P S reduced, plus fold/unfold
    """
    n = _check(n, size_bytes)
    S = size_bytes
    log_p = n.bit_length() - 1
    p = 1 << log_p
    folded = int(n > p)
    depth = math.ceil(math.log2(n)) if n > 1 else 0
    table = {
        "centralized": (2 * (n - 1), 2 * (n - 1) * S, (n - 1) * S),
        "ring": (2 * (n - 1), 2 * (n - 1) / n * S, (n - 1) / n * S),
        "tree": (2 * depth, 2 * depth * S, depth * S),
        "recursive_doubling": (log_p + 2 * folded, (log_p + 2 * folded) * S, (log_p + folded) * S),
        "rabenseifner": (2 * log_p + 2 * folded, (2 * (p - 1) / p + 2 * folded) * S,
                         ((p - 1) / p + folded) * S),
    }
    if algorithm not in table:
        raise ValueError(f"unknown all-reduce algorithm {algorithm!r}; expected one of "
                         f"{', '.join(ALGORITHMS)}")
    steps, nbytes, reduced = table[algorithm]
    return Cost(algorithm, n, S, steps, nbytes, reduced)


def double_binary_tree_cost(n, size_bytes, chunks):
    """Critical-path counts of NCCL's pipelined double binary tree all-reduce, in ``chunks`` pieces.

    Two binary trees each reduce then broadcast half of the data, and every rank is an inner node
    of at most one of them (Sanders, Speck and Traeff 2009, "Two-tree algorithms for full
    bandwidth broadcast, reduction and scan"; NCCL 2.4, "Massively Scale Your Deep Learning
    Training with NCCL 2.4", NVIDIA blog 2019). Each phase is a pipeline of ``chunks`` through
    depth d = floor(log2 N) levels: d + chunks - 1 rounds. In a round an inner node receives a
    half-chunk from each of its two children (in the broadcast: sends one to each), two messages
    of S/(2k) bytes, S/k in all, through its busiest port; as in the ring's model a port takes one
    message per step, so a round is two steps. So 4(d + k - 1) steps and 2(d + k - 1) S / k bytes:
    about 2S once k is much larger than d, the ring's bandwidth, with log N instead of N in the
    latency.
    """
    n = _check(n, size_bytes)
    k = whole_number("chunks", chunks)
    depth = n.bit_length() - 1
    rounds = 2 * (depth + k - 1) if n > 1 else 0
    children = 2 if n > 2 else 1          # an inner node's children: its messages per round
    return Cost("double_binary_tree", n, size_bytes, children * rounds, rounds * size_bytes / k,
                rounds / 2 * size_bytes / k)


def allreduce_time(algorithm, n, size_bytes, alpha, beta, gamma=0.0):
    """Model time in seconds of one all-reduce (see :func:`allreduce_cost`)."""
    return allreduce_cost(algorithm, n, size_bytes).time(alpha, beta, gamma)


def trace_time(result, alpha, beta, gamma=0.0):
    """Model time of a simulated run, read off its trace: each round costs alpha, plus beta times
    the most bytes one rank sends or receives in it, plus gamma times the most it reduces."""
    moved, reduced = result.critical_path()
    return result.n_steps * alpha + float(moved.sum()) * beta + float(reduced.sum()) * gamma


def ring_send_bytes(n, size_bytes):
    """Bytes each rank sends in a ring all-reduce: 2(N-1)/N S (it receives as many)."""
    n = _check(n, size_bytes)
    return 2 * (n - 1) / n * size_bytes


def centralized_root_bytes(n, size_bytes):
    """Bytes through the root of a centralized all-reduce: (N-1) S in plus (N-1) S out."""
    n = _check(n, size_bytes)
    return 2 * (n - 1) * size_bytes


# nccl-tests (doc/PERFORMANCE.md): busbw = algbw * factor, so that busbw can be compared with the
# hardware's link bandwidth whatever the number of ranks.
_BUS_FACTORS = {
    "allreduce": lambda n: 2 * (n - 1) / n,
    "reducescatter": lambda n: (n - 1) / n,
    "allgather": lambda n: (n - 1) / n,
    "alltoall": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
    "reduce": lambda n: 1.0,
}


def bus_factor(collective, n):
    """nccl-tests' factor from algorithm bandwidth to bus bandwidth (2(N-1)/N for all-reduce)."""
    key = collective.replace("-", "").replace("_", "").lower()
    if key not in _BUS_FACTORS:
        raise ValueError(f"unknown collective {collective!r}; expected one of "
                         f"{', '.join(_BUS_FACTORS)}")
    return _BUS_FACTORS[key](_check(n, 0))


def algbw(size_bytes, seconds):
    """Algorithm bandwidth in GB/s (10^9 bytes/s), as nccl-tests prints it: size / time, with the
    size nccl-tests reports (see :func:`busbw`)."""
    if seconds <= 0:
        raise ValueError(f"seconds={seconds!r}: expected a positive time")
    return size_bytes / seconds / 1e9


def busbw(collective, n, size_bytes, seconds):
    """Bus bandwidth in GB/s: algbw times :func:`bus_factor`.

    ``size_bytes`` is the size nccl-tests reports for the operation: for an all-reduce, the buffer
    every rank holds; for a reduce-scatter or an all-gather, the **total** array, N times the
    chunk each rank receives (reduce-scatter) or contributes (all-gather). With that size, busbw
    is the rate at which one rank of a ring pushes bytes, for every collective alike."""
    return algbw(size_bytes, seconds) * bus_factor(collective, n)
