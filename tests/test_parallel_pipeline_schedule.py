"""The pipeline schedule simulator: its bubble is the formula's, 1F1B holds fewer activations."""
import pytest

from gemmlab.parallel.pipeline_schedule import bubble_formula, simulate


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


def test_an_unknown_schedule_is_refused():
    with pytest.raises(ValueError, match="gpipe"):
        simulate("interleaved", 4, 8)
