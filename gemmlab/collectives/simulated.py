"""Centralized and ring collectives on simulated ranks (one NumPy process, ranks along axis 0).

Each function returns a :class:`~gemmlab.collectives.result.CollectiveResult`: every rank's output,
the bytes each rank sent and received, and the trace of messages. The ring functions move all
ranks' chunks of one step with a single fancy-indexed NumPy operation, so 128 ranks x 1 MiB take
well under a second; which chunk each rank sends in a step, and the trace, come from the one
ring's step table (``ring_steps.RingPlan``), which MPI and NCCL ranks walk one rank at a time.

Ring schedule (rank r, neighbours r-1 -> r -> r+1, all indices mod N):

* reduce-scatter step s = 0..N-2: rank r sends chunk (r - s - 1) to r + 1, which adds it to its
  own copy of that chunk. After N-1 steps rank r holds chunk r summed over all ranks.
* all-gather step s = 0..N-2: rank r sends chunk (r - s), which it holds complete, to r + 1,
  which stores it. After N-1 steps every rank holds every summed chunk.
"""
import numpy as np

from .buffers import as_arrays, chunk_bounds, stack_same_shape
from .result import Transfer, make_result
from .ring_steps import RingPlan


def _split_like_array_split(sizes):
    """How many leading chunks are one row longer, if ``sizes`` is np.array_split's pattern
    (some chunks of w rows, then the rest of w-1); None for any other pattern."""
    width = int(sizes.max())
    big = int(np.count_nonzero(sizes == width))
    pattern = (sizes[:big] == width).all() and (sizes[big:] == width - 1).all()
    return big if pattern else None


def _to_blocks(data, sizes):
    """(ranks, rows, row_items) -> (ranks, chunks, width, row_items): chunk c holds rows
    ``sizes[:c].sum()`` onward, zero-padded to the largest chunk's ``width`` rows."""
    n_ranks, rows, row_items = data.shape
    n, width = len(sizes), int(sizes.max())
    if width * n == rows:
        return data.reshape(n_ranks, n, width, row_items)
    blocks = np.zeros((n_ranks, n, width, row_items), dtype=data.dtype)
    big = _split_like_array_split(sizes)
    if big is not None:                       # two block copies instead of one per chunk
        head = big * width
        blocks[:, :big] = data[:, :head].reshape(n_ranks, big, width, row_items)
        blocks[:, big:, :width - 1] = data[:, head:].reshape(n_ranks, n - big, width - 1, row_items)
        return blocks
    start = 0
    for c, size in enumerate(sizes.tolist()):
        blocks[:, c, :size] = data[:, start:start + size]
        start += size
    return blocks


def _from_blocks(blocks, sizes):
    """Inverse of :func:`_to_blocks`: drop the padding, back to (ranks, rows, row_items)."""
    n_ranks, n, width, row_items = blocks.shape
    if width * n == int(sizes.sum()):
        return blocks.reshape(n_ranks, n * width, row_items)
    big = _split_like_array_split(sizes)
    if big is not None:
        head = blocks[:, :big].reshape(n_ranks, big * width, row_items)
        tail = blocks[:, big:, :width - 1].reshape(n_ranks, (n - big) * (width - 1), row_items)
        return np.concatenate([head, tail], axis=1)
    return np.concatenate([blocks[:, c, :size] for c, size in enumerate(sizes.tolist())], axis=1)


def _ring_pass(blocks, plan, phase):
    """The N-1 steps of ``phase`` on (ranks, chunks, width, items) blocks, in place: in each, every
    rank's chunk (the plan's step table) moves to the next rank at once."""
    ranks = np.arange(plan.n_ranks)
    nxt = (ranks + 1) % plan.n_ranks
    for s in range(plan.n_ranks - 1):
        chunk = plan.chunks_sent(ranks, phase, s)
        if phase == "reduce-scatter":
            blocks[nxt, chunk] += blocks[ranks, chunk]
        else:
            blocks[nxt, chunk] = blocks[ranks, chunk]


def _as_rows(data):
    """(ranks, *shape) -> (ranks, shape[0], rest) so that ring chunks are runs of axis-0 rows."""
    return data.reshape(data.shape[0], data.shape[1], -1)


def ring_allreduce(buffers):
    """Sum the ranks' buffers with a ring: a reduce-scatter, then an all-gather, 2(N-1) steps.

    ``buffers``: one array per rank, all of one shape and dtype. Every rank's output is the
    elementwise sum, with that shape and dtype. The buffer is split into N chunks of (nearly)
    equal size, so each rank sends 2(N-1)/N of its buffer in total.
    """
    data = stack_same_shape(buffers, "ring_allreduce")
    n, shape = data.shape[0], data.shape[1:]
    flat = data.reshape(n, -1, 1)
    sizes = np.diff(chunk_bounds(flat.shape[1], n))
    plan = RingPlan(tuple(int(k) for k in sizes), data.itemsize)
    blocks = _to_blocks(flat, sizes)
    _ring_pass(blocks, plan, "reduce-scatter")
    _ring_pass(blocks, plan, "all-gather")
    summed = _from_blocks(blocks, sizes)
    return plan.result("ring", [summed[r].reshape(shape) for r in range(n)])


def ring_reduce_scatter(buffers):
    """Sum the ranks' buffers and leave rank r with only chunk r of the sum (N-1 ring steps).

    The chunks split axis 0 the way ``np.array_split(buffer, N)`` does (a 1-D buffer by elements,
    a matrix by rows), so ``ring_allgather`` of the outputs rebuilds the full sum.
    """
    data = stack_same_shape(buffers, "ring_reduce_scatter")
    if data.ndim < 2:
        raise ValueError("ring_reduce_scatter: the buffers are scalars; a reduce-scatter splits "
                         "axis 0 of each buffer, so give it arrays of at least one dimension")
    n, shape = data.shape[0], data.shape[1:]
    rows = _as_rows(data)
    sizes = np.diff(chunk_bounds(rows.shape[1], n))
    plan = RingPlan(tuple(int(k) * rows.shape[2] for k in sizes), data.itemsize)
    blocks = _to_blocks(rows, sizes)
    _ring_pass(blocks, plan, "reduce-scatter")
    outputs = [blocks[r, r, :sizes[r]].reshape((int(sizes[r]),) + shape[1:]).copy()
               for r in range(n)]
    return plan.result("ring reduce-scatter", outputs, ("reduce-scatter",))


def ring_allgather(chunks):
    """Give every rank the concatenation (along axis 0) of all ranks' chunks (N-1 ring steps).

    ``chunks[r]`` is rank r's piece; the pieces may differ in length along axis 0 but must agree
    in dtype and in their other dimensions. A scalar counts as a piece of length one.
    """
    arrays = [np.atleast_1d(a) for a in as_arrays(chunks, "ring_allgather")]
    n, tail = len(arrays), arrays[0].shape[1:]
    for rank, a in enumerate(arrays):
        if a.shape[1:] != tail:
            raise ValueError(f"ring_allgather: rank {rank}'s chunk has shape {a.shape}, rank 0's "
                             f"{arrays[0].shape}; chunks may differ in length along axis 0 only")
    sizes = np.array([a.shape[0] for a in arrays], dtype=np.int64)
    width, row_items = int(sizes.max()), int(np.prod(tail, dtype=np.int64))
    blocks = np.zeros((n, n, width, row_items), dtype=arrays[0].dtype)
    for r, a in enumerate(arrays):
        blocks[r, r, :sizes[r]] = a.reshape(sizes[r], row_items)
    plan = RingPlan(tuple(int(k) * row_items for k in sizes), blocks.itemsize)
    _ring_pass(blocks, plan, "all-gather")
    gathered = _from_blocks(blocks, sizes)
    outputs = [gathered[r].reshape((int(sizes.sum()),) + tail) for r in range(n)]
    return plan.result("ring all-gather", outputs, ("all-gather",))


def centralized_allreduce(buffers, root=0):
    """Sum at one root, then send the sum back: the root handles 2(N-1) whole buffers.

    The root receives one buffer per step (N-1 steps, phase "reduce"), adding each in rank order,
    then sends the sum to one rank per step (N-1 steps, phase "broadcast"): one message at a time
    per rank, the same single-port rule the ring follows.
    """
    data = stack_same_shape(buffers, "centralized_allreduce")
    n = data.shape[0]
    if isinstance(root, bool) or not isinstance(root, (int, np.integer)) or not 0 <= root < n:
        raise ValueError(f"centralized_allreduce: root={root!r}, expected a rank from 0 to {n - 1}")
    others = [r for r in range(n) if r != root]
    nbytes = data[0].nbytes
    total = data[root].copy()
    trace = []
    for i, r in enumerate(others):
        total += data[r]
        trace.append(Transfer(i, r, int(root), None, "reduce", nbytes))
    for i, r in enumerate(others):
        trace.append(Transfer(n - 1 + i, int(root), r, None, "broadcast", nbytes))
    return make_result("centralized", [total.copy() for _ in range(n)], trace, n)
