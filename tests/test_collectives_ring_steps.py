"""The one ring (``gemmlab.collectives.ring_steps``) on the CPU: its plan (chunk split, schedule,
trace, byte ledger) agrees with the simulated ring for N = 1..8 and uneven sizes; its steps, run by
N threads over a queue transport standing in for NCCL, give the simulated ring's bits and the
ledger's byte counts; the same ring over the lab's simulated ranks (``RankTransport``) and over
MPI (``mpi_allreduce.MpiTransport``, with a fake communicator) gives the same bits."""
import numpy as np
import pytest
from multirank import QueueRing, random_buffers as _random

import gemmlab.collectives as C
from gemmlab.collectives import mpi_allreduce, ring_steps
from gemmlab.labs.ranks import run_ranks

RANKS = range(1, 9)
ITEMS = [3, 13, 64, 1001]      # fewer items than ranks, uneven splits, an even split


# --- the plan agrees with the simulated ring ------------------------------------------------------

@pytest.mark.parametrize("n", RANKS)
@pytest.mark.parametrize("items", ITEMS)
def test_allreduce_plan_is_the_simulated_ring(n, items):
    simulated = C.ring_allreduce([np.zeros(items, np.float32)] * n)
    plan = ring_steps.RingPlan.split(n, items, 4)
    assert list(plan.counts) == [len(c) for c in np.array_split(np.arange(items), n)]
    assert plan.trace() == simulated.steps
    ledger = plan.result("ring", simulated.outputs)
    np.testing.assert_array_equal(ledger.sent_bytes, simulated.sent_bytes)
    np.testing.assert_array_equal(ledger.recv_bytes, simulated.recv_bytes)
    if items % n == 0:
        assert ledger.sent_bytes.tolist() == [C.ring_send_bytes(n, 4 * items)] * n


@pytest.mark.parametrize("n", RANKS)
def test_reduce_scatter_and_allgather_plans_are_the_simulated_ones(n):
    rows = 11                                       # 11 rows of 3: unequal row blocks
    simulated = C.ring_reduce_scatter([np.zeros((rows, 3))] * n)
    plan = ring_steps.RingPlan.split(n, rows, 8, row_items=3)
    assert plan.trace(("reduce-scatter",)) == simulated.steps
    lengths = [r % 3 + 1 for r in range(n)]         # pieces of 1, 2, 3, 1, ... rows of 2
    gathered = C.ring_allgather([np.zeros((k, 2), np.int32) for k in lengths])
    assert ring_steps.RingPlan(tuple(2 * k for k in lengths), 4).trace(("all-gather",)) == gathered.steps


@pytest.mark.parametrize("n", RANKS)
def test_schedule_pairs_every_receive_with_its_sender(n):
    plan = ring_steps.RingPlan.split(n, 5 * n + 3, 4)
    schedules = [plan.schedule(r) for r in range(n)]
    assert all(len(s) == 2 * (n - 1) for s in schedules)
    for r in range(n):
        for i, step in enumerate(schedules[r]):
            sender = schedules[step.source][i]
            assert (sender.dest, sender.send, sender.step) == (r, step.recv, step.step)
        reduce = plan.steps(r, "reduce-scatter")
        # after the first step a rank passes on what it received the step before (the out-of-place
        # reduce-scatter sends from its output from then on)
        assert all(b.send == a.recv for a, b in zip(reduce, reduce[1:], strict=False))
        assert sorted(s.recv for s in reduce) == sorted(set(range(n)) - {(r - 1) % n})
        assert not reduce or reduce[-1].recv == r     # the last addition completes chunk r
        gather = plan.steps(r, "all-gather", first_step=n - 1)
        assert sorted(s.recv for s in gather) == sorted(set(range(n)) - {r})


@pytest.mark.parametrize("n", [1, 3, 8])
def test_views_are_the_array_split_chunks(n):
    flat = np.arange(29, dtype=np.float64)
    plan = ring_steps.RingPlan.split(n, 29, 8)
    assert plan.offsets[0] == 0 and plan.offsets[-1] == 29
    for view, expected in zip(plan.views(flat), np.array_split(flat, n), strict=True):
        assert np.shares_memory(view, flat) and np.array_equal(view, expected)
    with pytest.raises(ValueError, match="1-D buffer of 29 items"):
        plan.views(flat[:28])


def test_bad_plans_are_refused():
    with pytest.raises(ValueError, match=r"n_ranks \(the number of ranks\) must be a whole number"):
        ring_steps.RingPlan.split(0, 10, 4)
    with pytest.raises(ValueError, match="phase 'gossip'"):
        ring_steps.RingPlan.split(2, 10, 4).steps(0, "gossip")


# --- the ring functions over a stand-in transport give the simulated ring's bits -----------------

@pytest.mark.parametrize("n", RANKS)
@pytest.mark.parametrize("items", ITEMS)
def test_ring_allreduce_gives_the_simulated_bits_and_the_ledgers_bytes(n, items):
    everyone = _random(n, items, seed=items)
    kept = [e.copy() for e in everyone]
    ring = QueueRing(n)
    outputs = ring.run(lambda t: ring_steps.ring_allreduce(t, everyone[t.rank]))
    simulated = C.ring_allreduce(everyone)
    for got, expected in zip(outputs, simulated.outputs, strict=True):
        np.testing.assert_array_equal(got, expected)
    assert all(np.array_equal(a, b) for a, b in zip(everyone, kept, strict=True)), "an input was changed"
    assert ring.sent == simulated.sent_bytes.tolist()
    assert ring.received == simulated.recv_bytes.tolist()


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
def test_ring_reduce_scatter_and_allgather_match_the_simulated_ones(n):
    matrices = _random(n, (11, 3), seed=7, dtype=np.float64)
    blocks = QueueRing(n).run(lambda t: ring_steps.ring_reduce_scatter(t, matrices[t.rank]))
    for got, expected in zip(blocks, C.ring_reduce_scatter(matrices).outputs, strict=True):
        assert got.shape == expected.shape and np.array_equal(got, expected)
    pieces = [np.arange(2 * (r % 3 + 1), dtype=np.int64).reshape(-1, 2) * (r + 1) for r in range(n)]
    lengths = [len(p) for p in pieces]
    gathered = QueueRing(n).run(lambda t: ring_steps.ring_allgather(t, pieces[t.rank], lengths))
    for got in gathered:
        np.testing.assert_array_equal(got, np.concatenate(pieces))


def test_ring_ops_send_the_input_first_then_what_arrived():
    plan = ring_steps.RingPlan.split(3, 9, 8)
    src, dst = np.arange(9.0), np.zeros(9)
    ops = ring_steps.ring_ops(plan, 0, plan.views(src), plan.views(dst))
    assert [op.phase for op in ops] == ["reduce-scatter"] * 2 + ["all-gather"] * 2
    first, second = ops[0], ops[1]
    assert np.shares_memory(first.send, src) and np.shares_memory(second.send, dst)
    assert np.shares_memory(second.send, first.recv)       # what arrived in step 0 goes on
    assert all(np.shares_memory(op.addend, src) for op in ops[:2])
    assert all(op.addend is None and np.shares_memory(op.send, dst) for op in ops[2:])


def test_outputs_can_be_given_but_must_not_alias_the_input():
    everyone = _random(3, (4, 5), seed=1)
    outs = [np.full((4, 5), np.nan, np.float32) for _ in range(3)]
    results = QueueRing(3).run(lambda t: ring_steps.ring_allreduce(t, everyone[t.rank], outs[t.rank]))
    assert all(r is o for r, o in zip(results, outs, strict=True))
    np.testing.assert_array_equal(outs[2], C.ring_allreduce(everyone).outputs[2])
    with pytest.raises(ValueError, match="must not share memory"):
        QueueRing(1).run(lambda t: ring_steps.ring_allreduce(t, everyone[0], everyone[0]))
    with pytest.raises(ValueError, match="float32 array of shape \\(4, 5\\)"):
        QueueRing(1).run(lambda t: ring_steps.ring_allreduce(t, everyone[0], np.zeros(20, np.float32)))


def test_bad_collective_inputs_are_refused():
    with pytest.raises(ValueError, match="one length per rank"):
        QueueRing(2).run(lambda t: ring_steps.ring_allgather(t, np.zeros(3), [3, 3, 3]))
    with pytest.raises(ValueError, match="scalar"):
        QueueRing(1).run(lambda t: ring_steps.ring_reduce_scatter(t, np.float32(1.0)))
    with pytest.raises(TypeError, match="NumPy or CuPy array, got list"):
        QueueRing(1).run(lambda t: ring_steps.ring_allreduce(t, [1.0, 2.0]))


# --- one ring, every transport --------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 2, 5])
def test_the_step_table_is_the_schedule_of_every_rank(n):
    plan = ring_steps.RingPlan.split(n, 17, 4)
    ranks = np.arange(n)
    for phase in ring_steps.PHASES:
        for s in range(n - 1):
            table = plan.chunks_sent(ranks, phase, s)
            assert table.tolist() == [plan.steps(r, phase)[s].send for r in ranks]
            assert np.roll(table, 1).tolist() == [plan.steps(r, phase)[s].recv for r in ranks]


@pytest.mark.parametrize("n, items", [(1, 5), (3, 11), (4, 16), (8, 29)])
def test_the_lab_ranks_run_the_one_ring_to_the_simulated_bits(n, items):
    everyone = _random(n, items, seed=n)
    run = run_ranks(lambda comm, x: ring_steps.ring_allreduce(ring_steps.RankTransport(comm), x),
                    everyone)
    assert run.error is None, run.error
    simulated = C.ring_allreduce(everyone)
    for got, expected in zip(run.outputs, simulated.outputs, strict=True):
        np.testing.assert_array_equal(got, expected)


class FakeMpi:
    """mpi4py's two calls the MPI ring makes, over a QueueRing transport."""

    def __init__(self, transport):
        self.transport = transport

    def Get_rank(self):
        return self.transport.rank

    def Get_size(self):
        return self.transport.size

    def Sendrecv(self, send, dest, recvbuf, source):
        self.transport.sendrecv(send, dest, recvbuf, source)

    def allgather(self, value):
        return [value] * self.transport.size


@pytest.mark.parametrize("n", [1, 3, 4])
def test_mpi_runs_the_one_ring_to_the_simulated_bits(n):
    everyone = _random(n, 23, seed=7, dtype=np.float64)
    outputs = QueueRing(n).run(lambda t: mpi_allreduce.ring_allreduce(FakeMpi(t), everyone[t.rank]))
    for got, expected in zip(outputs, C.ring_allreduce(everyone).outputs, strict=True):
        np.testing.assert_array_equal(got, expected)
    pieces = [np.full(5, r, np.int64) for r in range(n)]
    gathered = QueueRing(n).run(lambda t: mpi_allreduce.ring_allgather(FakeMpi(t), pieces[t.rank]))
    assert all(np.array_equal(g, np.concatenate(pieces)) for g in gathered)
