"""The pipeline schedule simulator: its bubble is the formula's (as a share of the makespan, and
as Megatron-LM's ratio to the ideal time, interleaved too), 1F1B holds fewer activations."""
import pytest

from gemmlab.parallel.pipeline_schedule import bubble_formula, bubble_over_ideal_formula, simulate


@pytest.mark.parametrize("name", ["gpipe", "1f1b"])
@pytest.mark.parametrize("p,m,tb", [(4, 8, 1.0), (4, 8, 2.0), (3, 5, 2.0), (8, 3, 1.0)])
def test_the_simulated_bubble_is_the_formula(name, p, m, tb):
    run = simulate(name, p, m, 1.0, tb)
    assert run.makespan == pytest.approx((m + p - 1) * (1 + tb))
    for s in range(p):
        assert run.bubble_fraction(s) == pytest.approx(bubble_formula(p, m))


def test_1f1b_holds_p_minus_s_micro_batches_and_gpipe_all_of_them():
    assert [simulate("gpipe", 4, 8).peak_in_flight(s) for s in range(4)] == [8] * 4
    assert [simulate("1f1b", 4, 8).peak_in_flight(s) for s in range(4)] == [4, 3, 2, 1]
    assert simulate("1f1b", 4, 2).peak_in_flight(0) == 2            # never more than m


def test_every_step_waits_for_its_dependencies():
    run = simulate("1f1b", 4, 6, 1.0, 2.0)
    end = {(k, s, i): e for s in range(4) for k, i, _, e in run.ops[s]}
    start = {(k, s, i): b for s in range(4) for k, i, b, _ in run.ops[s]}
    for s in range(1, 4):
        for i in range(6):
            assert start[("F", s, i)] >= end[("F", s - 1, i)]
            assert start[("B", s - 1, i)] >= end[("B", s, i)]


@pytest.mark.parametrize("p,m,v,tb", [(4, 8, 2, 2.0), (4, 8, 4, 1.0), (2, 4, 3, 2.0), (8, 16, 2, 2.0)])
def test_megatron_s_bubble_is_idle_over_ideal_and_interleaving_divides_it_by_v(p, m, v, tb):
    plain = simulate("1f1b", p, m, 1.0, tb)
    interleaved = simulate("interleaved", p, m, 1.0, tb, chunks=v)
    f = bubble_formula(p, m)
    for s in range(p):
        assert plain.bubble_over_ideal(s) == pytest.approx(bubble_over_ideal_formula(p, m))
        assert plain.bubble_over_ideal(s) == pytest.approx(f / (1 - f))         # (p-1)/m
        assert interleaved.bubble_over_ideal(s) == pytest.approx(bubble_over_ideal_formula(p, m, v))
        assert interleaved.busy(s) == pytest.approx(plain.busy(s))               # same work
    assert interleaved.makespan == pytest.approx(m * (1 + tb) * (1 + (p - 1) / (v * m)))


def test_interleaved_steps_wait_for_the_previous_chunk_on_the_previous_device():
    p, m, v = 4, 8, 2
    run = simulate("interleaved", p, m, 1.0, 2.0, chunks=v)
    assert sum(len(ops) for ops in run.ops) == 2 * p * m * v
    first = {s: run.ops[s][0] for s in range(p)}
    assert first[0][2] == 0 and all(first[s][2] == first[s - 1][3] for s in range(1, p))


def test_an_unknown_schedule_and_bad_interleaving_are_refused():
    with pytest.raises(ValueError, match="gpipe"):
        simulate("zigzag", 4, 8)
    with pytest.raises(ValueError, match="multiple of the stages"):
        simulate("interleaved", 4, 6, chunks=2)
    with pytest.raises(ValueError, match="only the interleaved"):
        simulate("1f1b", 4, 8, chunks=2)
