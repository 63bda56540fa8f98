"""Lab 07.lab_ring: the student writes one rank's ring all-reduce, ``ring_allreduce(comm, x)``.

The check runs it on simulated ranks (:mod:`.ranks`) with integer data built so that every
value tells which ranks' contributions it sums and which element it is (:class:`Tags`): rank r's
element i is ``2^r + (i << R) + (random << (R + I))``. A sum over a set of ranks keeps the set in
its low R bits, the element index (times the set's size) in the next I bits and the random parts
above, so the check can read, from any message or result, which chunk it is and whom it sums.
That is how it names the mistake: a rank holding one reduced chunk (reduce-scatter only), a chunk
summed twice (an all-gather that adds), a chunk missing some ranks (off-by-one chunk indices),
whole buffers sent at once (to a root and back: centralized; or around the ring), too many
steps or bytes.
"""
import numpy as np

from ..collectives.buffers import chunk_bounds
from ..judging import FAIL, PASS, is_missing
from .kinds import CodeLab, NoAnswer, as_array
from .limits import TIME_LIMIT
from .ranks import MAX_RANKS, run_answer, run_ranks

RANDOM_BITS = 6


def _ranks(group):
    return "{" + ", ".join(map(str, sorted(group))) + "}"


class Tags:
    """Tagged per-rank int64 buffers of ``length`` values on ``n`` ranks, and their decoder."""

    def __init__(self, n, length, seed=0):
        self.n, self.length = n, length
        self.rank_bits = n
        self.index_bits = max(1, (n * length).bit_length())
        rng = np.random.default_rng(seed)
        index = np.arange(length, dtype=np.int64)
        self.inputs = [(np.int64(1) << r) + (index << self.rank_bits)
                       + (rng.integers(0, 1 << RANDOM_BITS, length, dtype=np.int64)
                          << (self.rank_bits + self.index_bits))
                       for r in range(n)]
        self.total = np.sum(self.inputs, axis=0)
        self.bounds = chunk_bounds(length, n)
        self.nbytes = self.inputs[0].nbytes

    def chunk(self, a, c):
        return a[self.bounds[c]:self.bounds[c + 1]]

    def sum_over(self, group, start, stop):
        return sum((self.inputs[r][start:stop] for r in group),
                   np.zeros(stop - start, dtype=np.int64))

    def decode(self, values):
        """(ranks summed, first element's index) if ``values`` is exactly a sum of the ranks'
        consecutive elements, else None."""
        values = np.asarray(values)
        if values.ndim != 1 or values.size == 0 or values.dtype.kind not in "iuf":
            return None
        as_int = values.astype(np.int64)
        if not np.array_equal(as_int, values):
            return None
        mask = int(as_int[0]) & ((1 << self.rank_bits) - 1)
        group = frozenset(r for r in range(self.n) if mask >> r & 1)
        field = (int(as_int[0]) >> self.rank_bits) & ((1 << self.index_bits) - 1)
        if not group or field % len(group):
            return None
        start = field // len(group)
        stop = start + values.size
        if stop > self.length or not np.array_equal(as_int, self.sum_over(group, start, stop)):
            return None
        return group, start

    def chunk_of(self, start, size):
        """The chunk index (an int), several consecutive chunks (a range), or None (the whole
        buffer, or a piece that is not made of whole chunks)."""
        bounds = self.bounds.tolist()
        if size == self.length or start not in bounds or start + size not in bounds:
            return None
        first, last = bounds.index(start), bounds.index(start + size)
        return first if last == first + 1 else range(first, last)

    def annotate(self, src, dst, data):
        """A message's (chunk, phase) for the trace: partial sums travel in the reduce-scatter,
        complete ones in the all-gather."""
        decoded = self.decode(data)
        if decoded is None:
            return None, "unknown"
        group, start = decoded
        phase = "all-gather" if len(group) == self.n else "reduce-scatter"
        return self.chunk_of(start, np.asarray(data).size), phase

    def classify(self, out, c):
        """What a rank's copy of chunk c holds: ("complete",), ("partial", ranks),
        ("extra", ranks added twice) or ("wrong",)."""
        got, want = self.chunk(out, c), self.chunk(self.total, c)
        if np.array_equal(got, want):
            return ("complete",)
        start = int(self.bounds[c])
        decoded = self.decode(got)
        if decoded is not None and decoded[1] == start:
            return ("partial", decoded[0])
        decoded = self.decode(got - want)
        if decoded is not None and decoded[1] == start:
            return ("extra", decoded[0])
        return ("wrong",)

    def chunk_order(self, out):
        """The order of the complete reduced chunks that make up ``out`` (e.g. [1, 2, 0]), or
        None if it is not made of them."""
        order, pos = [], 0
        while pos < self.length:
            found = next((c for c in range(self.n) if c not in order
                          and np.array_equal(out[pos:pos + len(self.chunk(self.total, c))],
                                             self.chunk(self.total, c))), None)
            if found is None:
                return None
            order.append(found)
            pos += len(self.chunk(self.total, found))
        return order


def ring_run(program, n_ranks=4, n_items=8, seed=0):
    """Run ``program(comm, x)`` on tagged buffers and return the run as a CollectiveResult, whose
    trace the ring stepper (``gemmlab.viz.ring.RingStepper(result=...)``) replays. Raises
    RuntimeError when the run stops (deadlock, an exception, the time limit)."""
    tags = Tags(n_ranks, n_items, seed)
    run = run_ranks(program, [(x,) for x in tags.inputs], allow_collectives=False,
                    time_limit=TIME_LIMIT).annotated(tags.annotate)
    if run.error:
        raise RuntimeError(run.error)
    return run.result(getattr(program, "__name__", "your ring"))


# -- what went wrong --

def _list(items, limit=3):
    shown = "; ".join(items[:limit])
    return shown + (f"; and {len(items) - limit} more" if len(items) > limit else "")


def _diagnose_results(tags, outs, run):
    n = tags.n
    table = [[tags.classify(out, c) for c in range(n)] for out in outs]
    complete = [[c for c in range(n) if table[r][c][0] == "complete"] for r in range(n)]
    extra = [(r, c, cell[1]) for r, row in enumerate(table) for c, cell in enumerate(row)
             if cell[0] == "extra"]
    partial = [(r, c, cell[1]) for r, row in enumerate(table) for c, cell in enumerate(row)
               if cell[0] == "partial"]
    owners = [cs[0] for cs in complete if len(cs) == 1]
    if (len(owners) == n and sorted(owners) == list(range(n))
            and len(partial) == n * (n - 1)):
        held = ", ".join(f"rank {r}: chunk {complete[r][0]}" for r in range(n))
        return (f"reduce-scatter only: each rank holds one reduced chunk ({held}) and partial "
                f"sums in the others. Add the all-gather: N-1 more steps in which every rank "
                f"forwards a complete chunk to its neighbour, which stores it (no adding).")
    if extra:
        items = [f"rank {r}'s chunk {c} is the sum plus ranks {_ranks(g)} a second time"
                 for r, c, g in extra]
        return (f"your all-gather adds: {_list(items)}. In the second phase the chunks that "
                f"travel are complete sums: the receiver stores them, it does not add them to "
                f"its stale copy.")
    if partial:
        items = [f"rank {r} got chunk {c} summed over ranks {_ranks(g)} only (missing "
                 f"{_ranks(set(range(n)) - g)})" for r, c, g in partial]
        return (f"off-by-one chunk indices: {_list(items)}.{_early_send(tags, run)} Check which "
                f"chunk rank r sends in step s of each phase: it must be the one it received "
                f"(and added to) in the step before; the course's ring sends chunk r-s-1, then "
                f"r-s.")
    orders = [(r, tags.chunk_order(out)) for r, out in enumerate(outs)]
    moved = [(r, order) for r, order in orders if order and order != sorted(order)]
    if moved:
        items = [f"rank {r} returned the reduced chunks in the order {order}" for r, order in moved]
        return (f"chunks in the wrong place: {_list(items)}. Every chunk is summed right; put "
                f"chunk c back at position c (np.array_split's order) before returning.")
    r = next(r for r in range(n) if not np.array_equal(outs[r], tags.total))
    i = int(np.flatnonzero(outs[r] != tags.total)[0])
    return (f"rank {r}'s result differs from the sum at element {i}: got {outs[r][i]}, "
            f"expected {tags.total[i]}.")


def _early_send(tags, run):
    """The first all-gather step in which a rank forwards a chunk it has not completed."""
    late = [t for t in run.trace if t.step >= tags.n - 1 and t.phase == "reduce-scatter"]
    if not late:
        return ""
    t = late[0]
    return (f" In step {t.step}, an all-gather step, rank {t.src} sent chunk {t.chunk} before it "
            f"held the complete sum.")


def _diagnose_shape(tags, r, arr):
    if arr.ndim == 1 and 0 < arr.size < tags.length:
        for c in range(tags.n):
            if np.array_equal(arr, tags.chunk(tags.total, c)):
                return (f"reduce-scatter only: rank {r} returned one reduced chunk (chunk {c}) "
                        f"instead of the whole buffer. Add the all-gather: N-1 more steps that "
                        f"pass the complete chunks around the ring, then return all of them.")
    return (f"rank {r} returned an array of shape {arr.shape}; expected the whole reduced buffer, "
            f"shape ({tags.length},)")


def _diagnose_traffic(tags, run):
    """For right results: centralized messages, non-neighbours, the step count, the bytes, and
    what the messages carried."""
    n, S = tags.n, tags.nbytes
    whole = [t for t in run.trace if t.bytes >= S]
    if whole:
        t = whole[0]
        sent = f"rank {t.src} sent its whole buffer ({t.bytes} bytes) to rank {t.dst} in one message"
        ring = "The ring cuts every buffer into N chunks and sends one chunk per step to the next rank."
        if len({(w.dst - w.src) % n for w in whole}) > 1:        # not all one way round
            return (f"centralized: {sent}. Sending whole buffers to a root and back is the "
                    f"centralized all-reduce, whose root handles 2(N-1)S. {ring}")
        return (f"whole buffers: {sent}. Passing whole buffers around the ring makes every rank "
                f"send (N-1)S or more, where a ring all-reduce sends 2(N-1)/N S per rank. {ring}")
    far = [t for t in run.trace if (t.dst - t.src) % n not in (1, n - 1)]
    if far:
        t = far[0]
        return (f"not a ring: rank {t.src} sent to rank {t.dst}, which is not its neighbour. "
                f"In a ring every rank sends only to rank + 1 and receives only from rank - 1.")
    steps = run.n_steps
    if steps != 2 * (n - 1):
        extra = (" Each exchange took two steps: with rendezvous sends a rank that sends and "
                 "then receives (or receives and then sends, as ordering by rank parity does) "
                 "makes its neighbour wait a round. comm.sendrecv(a, dst, src) sends and "
                 "receives in one step." if steps > 2 * (n - 1) else "")
        return (f"the sums are right, but your ring takes {steps} communication steps where a "
                f"ring all-reduce takes 2(N-1) = {2 * (n - 1)}: N-1 to reduce-scatter and N-1 to "
                f"all-gather, one chunk per rank per step.{extra}")
    sent = run.sent_bytes()
    chunk = int(np.diff(tags.bounds).max()) * tags.inputs[0].itemsize
    expected = 2 * (n - 1) * S / n
    if tags.length % n == 0:
        bad = [r for r in range(n) if sent[r] != expected]
    else:
        bad = [r for r in range(n) if sent[r] > 2 * (n - 1) * chunk]
        if not bad and sent.sum() != 2 * (n - 1) * S:
            bad = [int(np.argmax(sent))]
    if bad:
        r = bad[0]
        return (f"the sums are right, but rank {r} sent {sent[r]} bytes = {sent[r] / S:.3g} S; a "
                f"ring rank sends 2(N-1)/N S = {expected / S:.3g} S: one chunk of S/N per step.")
    return _blind(run)


def _blind(run):
    """The first message that carried no partial sum (zeros, say), named; None if every one
    did: the sums travel in the messages, whatever else the ranks might share."""
    blind = [(t, data) for t, data in zip(run.trace, run.payloads, strict=True)
             if t.phase == "unknown"]
    if not blind:
        return None
    t, data = blind[0]
    return (f"the ring's messages carried {'no partial sums' if np.any(data) else 'zeros'}: "
            f"rank {t.src} to rank {t.dst} in step {t.step}, {len(blind)} of "
            f"{len(run.trace)} messages. Each rank adds what arrives and sends that on: a rank "
            f"is a process of its own, and nothing but its messages reaches the others.")


def check_ring(fn, n, length, seed=0):
    """(status, feedback) of ``fn`` as a ring all-reduce on n ranks of ``length`` int64 values."""
    tags = Tags(n, length, seed)
    run = run_answer(fn, [(x,) for x in tags.inputs], False, TIME_LIMIT).annotated(tags.annotate)
    if run.error:
        return FAIL, run.error
    if all(is_missing(out) for out in run.outputs):
        raise NoAnswer()
    outs = []
    for r, out in enumerate(run.outputs):
        arr = as_array(out, f"rank {r}")
        if arr.shape != (length,):
            return FAIL, _diagnose_shape(tags, r, arr)
        outs.append(arr)
    if any(not np.array_equal(out, tags.total) for out in outs):
        zeros = any(not np.any(data) for data in run.payloads)  # never a partial sum
        return FAIL, (zeros and _blind(run)) or _diagnose_results(tags, outs, run)
    problem = _diagnose_traffic(tags, run)
    return (FAIL, problem) if problem else (PASS, "")


class RingLab(CodeLab):
    """07.lab_ring: ``ring_allreduce(comm, x)`` on 1 to 8 ranks, lengths that do and do not
    divide by N."""
    function = "your ring_allreduce"
    in_runtime, ranks = True, MAX_RANKS     # a cell's ranks: processes of the answer runtime
    PUBLIC = [(4, 16, 0), (3, 11, 1), (8, 29, 2), (1, 6, 3)]

    def cases(self):
        return list(self.PUBLIC)

    def hidden(self, rng):
        cases = []
        for i, n in enumerate(rng.permutation(np.arange(1, 9)).tolist()):
            extra = int(rng.integers(1, n)) if n > 1 and i % 2 else 0
            cases.append((n, n * int(rng.integers(2, 7)) + extra, int(rng.integers(1 << 30))))
        return cases

    def describe(self, case):
        n, length, _ = case
        return f"on {n} rank{'s' if n > 1 else ''} with {length} values each"

    def check_case(self, fn, case):
        return check_ring(fn, *case)

    def summary(self, cases):
        ranks = sorted({n for n, _, _ in cases})
        return (f"right on all {len(cases)} cases ({', '.join(map(str, ranks))} ranks): the exact "
                f"sum on every rank, 2(N-1) steps, 2(N-1)/N S sent per rank")
