"""All-reduce algorithms with log2(N) steps, for comparison with the ring (simulated ranks).

* ``tree_allreduce``: a binomial tree reduces to rank 0, then the same tree broadcasts back.
  2 ceil(log2 N) steps, each moving the whole buffer.
* ``recursive_doubling_allreduce``: in step k every rank swaps its whole partial sum with the rank
  2^k away and adds. log2 N steps of a whole buffer: few steps, many bytes.
* ``rabenseifner_allreduce``: a reduce-scatter by recursive halving (send half of what is left
  each step) then an all-gather by recursive doubling: the ring's bytes, 2(N-1)/N of the buffer,
  in 2 log2 N steps.

When N is not a power of two, the recursive algorithms first fold the extra ranks in (as MPICH
does): each of the first 2r ranks with an even number hands its buffer to the next rank, the
power-of-two group does the work, and the result is handed back at the end (phases "fold" and
"unfold").
"""
import numpy as np

from .buffers import chunk_bounds, stack_same_shape
from .result import Transfer, make_result


def tree_allreduce(buffers):
    """Binomial-tree reduce to rank 0, then binomial-tree broadcast from rank 0."""
    data = stack_same_shape(buffers, "tree_allreduce")
    n, nbytes = data.shape[0], data[0].nbytes
    trace, step, mask = [], 0, 1
    while mask < n:
        receivers = np.arange(0, n - mask, 2 * mask)
        data[receivers] += data[receivers + mask]
        trace.extend(Transfer(step, int(r) + mask, int(r), None, "reduce", nbytes) for r in receivers)
        step, mask = step + 1, mask * 2
    while mask > 1:
        mask //= 2
        senders = np.arange(0, n - mask, 2 * mask)
        data[senders + mask] = data[senders]
        trace.extend(Transfer(step, int(r), int(r) + mask, None, "broadcast", nbytes)
                     for r in senders)
        step += 1
    return make_result("tree", list(data), trace, n)


def _fold(data, trace, nbytes):
    """Fold the ranks beyond the largest power of two into their neighbours.

    Returns the ranks that take part in the power-of-two stage (index = their rank there) and the
    next step number."""
    n = data.shape[0]
    pof2 = 1 << (n.bit_length() - 1)
    extra = n - pof2
    if extra:
        evens = np.arange(0, 2 * extra, 2)
        data[evens + 1] += data[evens]
        trace.extend(Transfer(0, int(r), int(r) + 1, None, "fold", nbytes) for r in evens)
    active = np.array([r for r in range(n) if r >= 2 * extra or r % 2 == 1])
    return active, int(extra > 0)


def _unfold(data, trace, step, nbytes):
    n = data.shape[0]
    extra = n - (1 << (n.bit_length() - 1))
    if extra:
        evens = np.arange(0, 2 * extra, 2)
        data[evens] = data[evens + 1]
        trace.extend(Transfer(step, int(r) + 1, int(r), None, "unfold", nbytes) for r in evens)


def recursive_doubling_allreduce(buffers):
    """Every rank swaps its whole partial sum with the rank 2^k away and adds, k = 0, 1, ..."""
    data = stack_same_shape(buffers, "recursive_doubling_allreduce")
    nbytes, trace = data[0].nbytes, []
    active, step = _fold(data, trace, nbytes)
    index = np.arange(len(active))
    mask = 1
    while mask < len(active):
        partner = active[index ^ mask]
        lower = index[(index & mask) == 0]
        pair_sum = data[active[lower]] + data[active[lower | mask]]
        data[active[lower]] = pair_sum                 # both partners store the same bits
        data[active[lower | mask]] = pair_sum
        trace.extend(Transfer(step, int(a), int(p), None, "exchange", nbytes)
                     for a, p in zip(active, partner, strict=True))
        step, mask = step + 1, mask * 2
    _unfold(data, trace, step, nbytes)
    return make_result("recursive doubling", list(data), trace, data.shape[0])


def rabenseifner_allreduce(buffers):
    """Reduce-scatter by recursive halving, then all-gather by recursive doubling.

    The power-of-two group of P ranks splits the (flattened) buffer into P chunks. While halving,
    a rank keeps the lower half of its current chunk range if it is the lower rank of its pair and
    sends the other half; at the end rank i of the group owns chunk i, summed. The all-gather
    swaps owned ranges with partners at distance 1, 2, 4, ... until every rank has all chunks.
    """
    data = stack_same_shape(buffers, "rabenseifner_allreduce")
    n, shape = data.shape[0], data.shape[1:]
    flat = data.reshape(n, -1)
    nbytes, trace = flat[0].nbytes, []
    active, step = _fold(flat, trace, nbytes)
    p = len(active)
    bounds = chunk_bounds(flat.shape[1], p)

    def send(i, j, lo, hi, phase):
        a, b = bounds[lo], bounds[hi]
        if phase == "reduce-scatter":
            flat[active[j], a:b] += flat[active[i], a:b]
        else:
            flat[active[j], a:b] = flat[active[i], a:b]
        trace.append(Transfer(step, int(active[i]), int(active[j]), range(lo, hi), phase,
                              int(b - a) * flat.itemsize))

    lo, hi = np.zeros(p, dtype=np.int64), np.full(p, p, dtype=np.int64)
    mask = p // 2
    while mask >= 1:
        for i in range(p):
            j, mid = i ^ mask, (lo[i] + hi[i]) // 2
            if i < j:       # the lower rank of the pair keeps the lower half, sends the upper
                send(i, j, mid, hi[i], "reduce-scatter")
            else:
                send(i, j, lo[i], mid, "reduce-scatter")
        for i in range(p):
            if i & mask:
                lo[i] = (lo[i] + hi[i]) // 2
            else:
                hi[i] = (lo[i] + hi[i]) // 2
        step, mask = step + 1, mask // 2
    mask = 1
    while mask < p:
        for i in range(p):
            send(i, i ^ mask, lo[i], hi[i], "all-gather")
        partner = np.arange(p) ^ mask
        lo, hi = np.minimum(lo, lo[partner]), np.maximum(hi, hi[partner])
        step, mask = step + 1, mask * 2
    _unfold(flat, trace, step, nbytes)
    return make_result("rabenseifner", [flat[r].reshape(shape) for r in range(n)], trace, n)
