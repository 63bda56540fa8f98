"""07.lab_ring: the reference passes on the public and on hidden cases; every feedback message has
the broken program it is for, which fails with that message both in the notebook's check (public
cases) and under the grader (hidden cases)."""
from pathlib import Path

import numpy as np
import pytest

import gemmlab as gl
from gemmlab.grading import judge
from gemmlab.grading.bank import get_question
from gemmlab.labs import ring
from gemmlab.labs.solutions import solution

REFERENCE = solution("07.lab_ring", name="ring_allreduce")

QID = "07.lab_ring"


def _chunks(comm, x):
    n, r = comm.size, comm.rank
    return n, r, [c.copy() for c in np.array_split(x, n)], (r + 1) % n, (r - 1) % n


def _reduce_scatter(comm, chunks, shift=0):
    n, r = comm.size, comm.rank
    for s in range(n - 1):
        send, arriving = (r - s - 1 + shift) % n, (r - s - 2 + shift) % n
        chunks[arriving] = chunks[arriving] + comm.sendrecv(chunks[send], (r + 1) % n,
                                                            (r - 1) % n)


def reduce_scatter_only(comm, x):
    n, r, chunks, right, left = _chunks(comm, x)
    _reduce_scatter(comm, chunks)
    return np.concatenate(chunks)


def reduce_scatter_returning_its_chunk(comm, x):
    n, r, chunks, right, left = _chunks(comm, x)
    _reduce_scatter(comm, chunks)
    return chunks[r]


def allgather_that_adds(comm, x):
    n, r, chunks, right, left = _chunks(comm, x)
    _reduce_scatter(comm, chunks)
    for s in range(n - 1):
        send, arriving = (r - s) % n, (r - s - 1) % n
        chunks[arriving] = chunks[arriving] + comm.sendrecv(chunks[send], right, left)
    return np.concatenate(chunks)


def off_by_one(comm, x):
    n, r, chunks, right, left = _chunks(comm, x)
    _reduce_scatter(comm, chunks, shift=1)      # rank r completes chunk r+1 ...
    for s in range(n - 1):                      # ... but the all-gather starts from chunk r
        send, arriving = (r - s) % n, (r - s - 1) % n
        chunks[arriving] = comm.sendrecv(chunks[send], right, left)
    return np.concatenate(chunks)


def centralized(comm, x):
    if comm.rank == 0:
        total = x.copy()
        for src in range(1, comm.size):
            total = total + comm.recv(src)
        for dst in range(1, comm.size):
            comm.send(dst, total)
        return total
    comm.send(0, x)
    return comm.recv(0)


def whole_buffer_ring(comm, x):
    n, r = comm.size, comm.rank
    total, passing = x.copy(), x.copy()
    for _ in range(n - 1):
        passing = comm.sendrecv(passing, (r + 1) % n, (r - 1) % n)
        total = total + passing
    return total


def send_first(comm, x):
    n, r, chunks, right, left = _chunks(comm, x)
    for s in range(n - 1):
        comm.send(right, chunks[(r - s - 1) % n])
        chunks[(r - s - 2) % n] = chunks[(r - s - 2) % n] + comm.recv(left)
    return np.concatenate(chunks)


def send_then_recv(comm, x):
    n, r, chunks, right, left = _chunks(comm, x)

    def exchange(a):
        if r % 2 == 0:
            comm.send(right, a)
            return comm.recv(left)
        got = comm.recv(left)
        comm.send(right, a)
        return got

    for s in range(n - 1):
        chunks[(r - s - 2) % n] = chunks[(r - s - 2) % n] + exchange(chunks[(r - s - 1) % n])
    for s in range(n - 1):
        chunks[(r - s - 1) % n] = exchange(chunks[(r - s) % n])
    return np.concatenate(chunks)


def padded_messages(comm, x):
    """A right ring whose messages carry one value too many: the bytes give it away."""
    n, r, chunks, right, left = _chunks(comm, x)
    for s in range(n - 1):
        a = chunks[(r - s - 1) % n]
        got = comm.sendrecv(np.concatenate([a, a[:1]]), right, left)
        chunks[(r - s - 2) % n] = chunks[(r - s - 2) % n] + got[:-1]
    for s in range(n - 1):
        a = chunks[(r - s) % n]
        chunks[(r - s - 1) % n] = comm.sendrecv(np.concatenate([a, a[:1]]), right, left)[:-1]
    return np.concatenate(chunks)


def skip_a_neighbour(comm, x):
    """A right ring, but over ranks r, r+3, r+6, ... (a cycle when 3 does not divide N)."""
    n, r = comm.size, comm.rank
    k = 3 if n > 4 and n % 3 else 1
    i = r * pow(k, -1, n) % n if n > 1 else 0          # this rank's place on that cycle
    chunks = [c.copy() for c in np.array_split(x, n)]
    right, left = (r + k) % n, (r - k) % n
    for s in range(n - 1):
        chunks[(i - s - 2) % n] = chunks[(i - s - 2) % n] + comm.sendrecv(chunks[(i - s - 1) % n],
                                                                          right, left)
    for s in range(n - 1):
        chunks[(i - s - 1) % n] = comm.sendrecv(chunks[(i - s) % n], right, left)
    return np.concatenate(chunks)


def concatenated_in_the_wrong_order(comm, x):
    n, r, chunks, right, left = _chunks(comm, x)
    _reduce_scatter(comm, chunks)
    for s in range(n - 1):
        chunks[(r - s - 1) % n] = comm.sendrecv(chunks[(r - s) % n], right, left)
    return np.concatenate(chunks[1:] + chunks[:1])


def builtin_allreduce(comm, x):
    return comm.all_reduce(x)


def plus_one(comm, x):
    return REFERENCE(comm, x) + 1


def too_short(comm, x):
    return REFERENCE(comm, x)[:-1]


def raises_on_rank_two(comm, x):
    if comm.rank == 2:
        raise IndexError("chunk 9 out of range")
    return REFERENCE(comm, x)


def untouched(comm, x):
    return ...


def parity_ordered(comm, x):
    """What the deadlock's advice used to suggest: even ranks send first, odd ranks receive
    first. No deadlock, the right sums, but two steps per exchange."""
    n, r, chunks, right, left = _chunks(comm, x)

    def exchange(outgoing):
        if r % 2 == 0:
            comm.send(right, outgoing)
            return comm.recv(left)
        incoming = comm.recv(left)
        comm.send(right, outgoing)
        return incoming
    for s in range(n - 1):
        chunks[(r - s - 2) % n] = chunks[(r - s - 2) % n] + exchange(chunks[(r - s - 1) % n])
    for s in range(n - 1):
        chunks[(r - s - 1) % n] = exchange(chunks[(r - s) % n])
    return np.concatenate(chunks)


BROKEN = [
    (reduce_scatter_only, "reduce-scatter only: each rank holds one reduced chunk (rank 0: "),
    (reduce_scatter_returning_its_chunk, "reduce-scatter only: rank 0 returned one reduced chunk"),
    (allgather_that_adds, "your all-gather adds: rank 0's chunk"),
    (off_by_one, "off-by-one chunk indices: rank 0 got chunk"),
    (centralized, "centralized: rank 1 sent its whole buffer"),
    (whole_buffer_ring, "whole buffers: rank 0 sent its whole buffer"),
    (send_first, "deadlock: rank 0 waits in send to 1, rank 1 waits in send to "),
    (send_first, "Use comm.sendrecv(a, dst, src): it sends and receives in one step"),
    (send_then_recv, "a rank that sends and then receives (or receives and then sends"),
    (parity_ordered, "communication steps where a ring all-reduce takes 2(N-1) = "),
    (parity_ordered, "as ordering by rank parity does) makes its neighbour wait a round. "
                     "comm.sendrecv(a, dst, src) sends and receives in one step"),
    (padded_messages, "the sums are right, but rank "),
    (skip_a_neighbour, "not a ring: rank 0 sent to rank 3, which is not its neighbour"),
    (concatenated_in_the_wrong_order,
     "chunks in the wrong place: rank 0 returned the reduced chunks in the order [1, "),
    (builtin_allreduce, "comm.all_reduce(a) is not available in this lab"),
    (plus_one, "rank 0's result differs from the sum at element 0"),
    (too_short, "rank 0 returned an array of shape"),
    (raises_on_rank_two, "rank 2 raised IndexError: chunk 9 out of range"),
]


def test_the_reference_passes_the_public_and_hidden_cases():
    assert judge(QID, REFERENCE).status == "pass"
    for seed in range(3):
        rng = np.random.default_rng(seed)
        assert judge(QID, REFERENCE, rng).status == "pass"


def test_the_hidden_cases_cover_1_to_8_ranks_and_lengths_that_do_and_do_not_divide():
    cases = get_question(QID).kind.hidden(np.random.default_rng(0))
    assert sorted(n for n, _, _ in cases) == list(range(1, 9))
    assert any(length % n for n, length, _ in cases)
    assert any(length % n == 0 and n > 1 for n, length, _ in cases)
    assert not set(cases) & set(get_question(QID).kind.cases())


@pytest.mark.parametrize("program,message", BROKEN,
                         ids=[f"{p.__name__}-{i}" for i, (p, _) in enumerate(BROKEN)])
def test_each_mistake_fails_with_its_own_message(program, message):
    for rng in (None, np.random.default_rng(1)):
        result = judge(QID, program, rng)
        assert result.status == "fail"
        assert message in result.feedback, result.feedback


def test_an_untouched_skeleton_is_not_attempted():
    assert judge(QID, untouched).status == "not attempted"
    assert judge(QID, untouched, np.random.default_rng(0)).status == "not attempted"


def test_an_endless_rank_fails_in_bounded_time(monkeypatch):
    monkeypatch.setattr(ring, "TIME_LIMIT", 0.5)

    def spin(comm, x):
        while comm.rank == 1:
            pass
        return x

    result = judge(QID, spin)
    assert result.status == "fail" and "rank 1 did not finish within 0.5 s" in result.feedback


@pytest.mark.parametrize("qid, source", [
    ("07.lab_ring", "def ring_allreduce(comm, x):\n"
                    "    return gl.labs.reference_ring_allreduce(comm, x)\n"),
    ("07.lab_ring", "from gemmlab.labs.ring import reference_ring_allreduce\n"
                    "def ring_allreduce(comm, x):\n    return reference_ring_allreduce(comm, x)\n"),
    ("07.lab_ring", "def ring_allreduce(comm, x):\n"
                    "    return gl.collectives.ring_allreduce([x])[0]\n"),
    ("14.lab_attention", "from gemmlab.labs.tensor import reference_attention_rank\n"
                         "def attention_rank(comm, X, Wq_r, Wk_r, Wv_r, Wo, b_o, n_heads):\n"
                         "    return reference_attention_rank(comm, X, Wq_r, Wk_r, Wv_r, Wo, b_o, "
                         "n_heads)\n"),
])
def test_calling_a_reference_program_fails_and_none_is_in_the_package(qid, source):
    from gemmlab_grader.isolate import judge_code
    name = source.split("def ", 1)[1].split("(", 1)[0]
    result = judge_code(qid, source, name, seed=3, timeout=240)
    assert result.status == "fail", result.feedback
    assert ("is not allowed in this answer" in result.feedback
            or "grants these imports only: none" in result.feedback), result.feedback
    package = Path(gl.__file__).parent
    defined = [p for p in package.rglob("*.py") if "def reference_" in p.read_text()]
    assert defined == []
    with pytest.raises(AttributeError):
        gl.labs.reference_ring_allreduce


def test_parity_ordering_is_told_its_step_count_on_the_public_case():
    """Four ranks: three exchanges each way, each taking two steps under parity ordering."""
    result = judge(QID, parity_ordered)
    assert "takes 12 communication steps where a ring all-reduce takes 2(N-1) = 6" in \
        result.feedback, result.feedback


SHARED_LIST = '''SUMS = []


def ring_allreduce(comm, x):
    n, r = comm.size, comm.rank
    SUMS.append(x.copy())                   # the ranks share the cell's globals ...
    chunks = [c.copy() for c in np.array_split(x, n)]
    for step in range(2 * (n - 1)):         # ... while zeros travel in the ring's pattern
        comm.sendrecv(np.zeros_like(chunks[(r - step - 1) % n]), (r + 1) % n, (r - 1) % n)
    return sum(SUMS[-n:])
'''


def test_a_sum_carried_by_a_module_level_list_fails_on_what_the_messages_carried():
    """Issue 54: the results, steps, neighbours and bytes were right, and it passed; the check
    now reads what each message carried."""
    from gemmlab_grader.isolate import judge_code
    namespace = {"np": np}
    exec(SHARED_LIST, namespace)
    checked = judge(QID, namespace["ring_allreduce"])
    graded = judge_code(QID, SHARED_LIST, "ring_allreduce", seed=4, timeout=240)
    for result in (checked, graded):
        assert result.status == "fail", result.feedback
        assert "the ring's messages carried zeros: rank 0 to rank 1 in step 0" in result.feedback
