"""The simulated ranks that run students' per-rank programs: rendezvous semantics, copies on send,
the recorded trace and steps, collectives, and every way a run can stop (deadlock with its
wait-for cycle, a raising rank, an endless rank, a misused call) without hanging."""
import linecache
import time

import numpy as np
import pytest

from gemmlab.collectives.result import CollectiveResult
from gemmlab.labs import ranks, ring_run, run_ranks
from gemmlab.labs.limits import call_plain
from gemmlab.labs.solutions import solution
from gemmlab.judging import code_of
from gemmlab.judging import load_function
from gemmlab.viz.ring import RingStepper, holdings
REFERENCE = solution("07.lab_ring", name="ring_allreduce")


def _inputs(n, length=10):
    return [np.arange(length) * (r + 1) for r in range(n)]


def test_the_reference_ring_sums_on_every_rank_in_2n_minus_2_steps():
    for n in range(1, 9):
        run = run_ranks(REFERENCE, _inputs(n, 13))
        assert run.error is None
        assert all(np.array_equal(out, np.sum(_inputs(n, 13), axis=0)) for out in run.outputs)
        assert run.n_steps == 2 * (n - 1)
        assert len(run.trace) == 2 * n * (n - 1)


def test_send_then_recv_takes_two_rounds_per_ring_step():
    def alternate(comm, x):
        right, left = (comm.rank + 1) % comm.size, (comm.rank - 1) % comm.size
        if comm.rank % 2 == 0:
            comm.send(right, x)
            return x + comm.recv(left)
        got = comm.recv(left)
        comm.send(right, x)
        return x + got

    run = run_ranks(alternate, _inputs(4))
    assert run.error is None
    assert sorted((t.src, t.step) for t in run.trace) == [(0, 0), (1, 1), (2, 0), (3, 1)]


def test_a_sent_array_is_a_copy():
    def writer(comm, x):
        if comm.rank == 0:
            a = np.zeros(3)
            comm.send(1, a)
            a[:] = 99                    # after the send: rank 1 must not see it
            return a
        got = comm.recv(0)
        return got.copy()

    run = run_ranks(writer, [0, 0])
    assert np.array_equal(run.outputs[1], np.zeros(3))


def test_each_rank_gets_its_own_copy_of_its_arguments():
    shared = np.zeros(4)

    def scribble(comm, x):
        x += comm.rank + 1
        return x

    run = run_ranks(scribble, [shared, shared])
    assert np.array_equal(shared, np.zeros(4))
    assert np.array_equal(run.outputs[1], np.full(4, 2.0))


def test_send_returns_only_once_the_receiver_has_the_data():
    order = []

    def rendezvous(comm, x):
        if comm.rank == 0:
            comm.send(1, x)
            order.append("send returned")
        else:
            time.sleep(0.2)
            order.append("recv starts")
            comm.recv(0)

    assert run_ranks(rendezvous, [1, 1]).error is None
    assert order == ["recv starts", "send returned"]


def test_every_rank_sending_first_is_a_deadlock_with_its_cycle():
    def send_first(comm, x):
        comm.send((comm.rank + 1) % comm.size, x)
        return comm.recv((comm.rank - 1) % comm.size)

    run = run_ranks(send_first, _inputs(4))
    # found from the wait-for cycle, not by the time limit (which would say "timeout")
    assert run.failure == "deadlock"
    assert run.error.startswith("deadlock: rank 0 waits in send to 1, rank 1 waits in send to 2, "
                                "rank 2 waits in send to 3, rank 3 waits in send to 0: every "
                                "rank sends first and a rendezvous send needs its receiver")


def test_every_rank_receiving_first_is_a_deadlock():
    run = run_ranks(lambda comm, x: comm.recv((comm.rank + 1) % comm.size), _inputs(3))
    assert run.failure == "deadlock"
    assert "rank 0 waits in recv from 1" in run.error
    assert "every rank waits to receive and no rank is sending" in run.error


def test_waiting_for_a_rank_that_returned_is_a_deadlock_naming_it():
    def early(comm, x):
        if comm.rank == 1:
            return x
        return comm.recv(1)

    run = run_ranks(early, _inputs(2))
    assert run.failure == "deadlock"
    assert "rank 0 waits in recv from 1" in run.error
    assert "rank 1 has already returned" in run.error


def test_a_collective_against_a_send_is_a_deadlock():
    def mixed(comm, x):
        if comm.rank == 0:
            return comm.all_reduce(x)
        comm.send(0, x)
        return x

    run = run_ranks(mixed, _inputs(2))
    assert run.failure == "deadlock"
    assert "rank 0 waits in all_reduce" in run.error and "rank 1 waits in send to 0" in run.error
    assert "do not call the same communication in the same order" in run.error


def test_a_rank_that_raises_stops_the_run_and_is_named_with_its_line():
    def boom(comm, x):
        if comm.rank == 2:
            raise ValueError("bad chunk")
        return comm.recv((comm.rank + 1) % comm.size)

    run = run_ranks(boom, _inputs(4))
    assert run.failure == "error" and run.failed_rank == 2
    assert run.error.startswith("rank 2 raised ValueError: bad chunk (line ")
    assert 'raise ValueError("bad chunk")' in run.error


def test_an_endless_rank_is_stopped_and_named():
    def spin(comm, x):
        if comm.rank == 1:
            while True:
                pass
        return x

    run = run_ranks(spin, _inputs(3), time_limit=0.5)
    assert run.failure == "timeout" and run.failed_rank == 1
    assert "rank 1 did not finish within 0.5 s" in run.error


def test_an_endless_rank_cannot_swallow_the_stop():
    def stubborn(comm, x):
        while True:
            try:
                while True:
                    pass
            except Exception:
                pass

    run = run_ranks(stubborn, [1], time_limit=0.3)
    assert run.failure == "timeout"


def test_bad_arguments_say_what_was_expected():
    run = run_ranks(lambda comm, x: comm.send(x, 1), [np.ones(2), np.ones(2)])
    assert "comm.send(dst, a): dst: expected a rank number from 0 to 1, got ndarray" in run.error
    run = run_ranks(lambda comm, x: comm.recv(5), [1, 1])
    assert "rank 5 does not exist; there are 2 ranks, 0 to 1" in run.error
    run = run_ranks(lambda comm, x: comm.send(1 - comm.rank, "hello"), [1, 1])
    assert "expected a NumPy array of numbers, got str" in run.error


def test_collectives_sum_and_concatenate_in_rank_order_and_are_logged():
    def both(comm, x):
        return comm.all_reduce(x), comm.all_gather(x, axis=0), comm.all_gather(x[None], axis=0)

    xs = [np.full(3, r + 1.0) for r in range(3)]
    run = run_ranks(both, xs)
    total, flat, stacked = run.outputs[2]
    assert np.array_equal(total, np.full(3, 6.0))
    assert np.array_equal(flat, np.concatenate(xs)) and np.array_equal(stacked, np.stack(xs))
    assert [c.collective for c in run.collectives] == ["all-reduce", "all-gather", "all-gather"]
    assert run.collectives[0].shapes == ((3,),) * 3
    assert run.comm.sent_per_rank() == (2 * 2 * 24 // 3 + 2 * 24 + 2 * 24,) * 3
    assert "all-reduce" in str(run.comm)


def test_mismatched_collectives_are_named():
    run = run_ranks(lambda comm, x: comm.all_reduce(x) if comm.rank else comm.all_gather(x),
                    _inputs(2))
    assert run.failure == "rule"
    assert "rank 1 called all-reduce but rank 0 called all-gather" in run.error
    run = run_ranks(lambda comm, x: comm.all_reduce(x[:comm.rank + 1]), _inputs(2))
    assert "an all-reduce adds arrays of one shape" in run.error


def test_collectives_can_be_forbidden():
    run = run_ranks(lambda comm, x: comm.all_reduce(x), _inputs(2), allow_collectives=False)
    assert run.failure == "rule"
    assert "comm.all_reduce(a) is not available in this lab" in run.error


def test_the_recorded_run_replays_in_the_ring_stepper():
    recorded = ring_run(REFERENCE, n_ranks=4, n_items=8)
    assert isinstance(recorded, CollectiveResult)
    assert recorded.n_steps == 6
    assert all(t.phase in ("reduce-scatter", "all-gather") for t in recorded.steps)
    grid = holdings(recorded, 3)
    assert all(grid[r][r] == frozenset(range(4)) for r in range(4))
    stepper = RingStepper(result=recorded)
    assert stepper.slider.max == 6
    stepper.show(6)
    assert "ring_allreduce, 4 ranks" in stepper.title.value
    with pytest.raises(RuntimeError, match="deadlock"):
        ring_run(lambda comm, x: comm.recv(0), n_ranks=2)


def test_a_function_travels_as_its_cell_source():
    cell = ("def double_ring(comm, x):\n"
            "    return 2 * np.asarray(x)\n"
            "check('07.lab_ring', double_ring)\n")
    name = "<ipython-input-3-0123456789ab>"
    linecache.cache[name] = (len(cell), None, cell.splitlines(True), name)
    namespace = {"np": np, "check": lambda *a: None}
    exec(compile(cell, name, "exec"), namespace)
    source, fn_name = code_of(namespace["double_ring"])
    assert (source, fn_name) == (cell, "double_ring")
    rebuilt = load_function(source, fn_name)
    assert np.array_equal(rebuilt(None, [1, 2]), [2, 4])
    with pytest.raises(ValueError, match="lambda"):
        code_of(lambda comm, x: x)
    with pytest.raises(ValueError, match="does not define a function named 'other'"):
        load_function(source, "other")


def test_run_ranks_refuses_what_is_not_a_program():
    with pytest.raises(TypeError, match="program"):
        run_ranks(3, [1])
    with pytest.raises(ValueError, match="at least one rank"):
        run_ranks(lambda comm: None, [])
    assert ranks.DEFAULT_TIME_LIMIT <= 10


def test_a_helper_s_call_travels_as_plain_data():
    assert call_plain(lambda a, b: a + b, (2, 3)) == {"value": 5, "error": None}
    assert "raised ZeroDivisionError" in call_plain(lambda: 1 / 0, ())["error"]
