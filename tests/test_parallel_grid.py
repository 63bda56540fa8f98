"""RankGrid accepts Megatron-LM's own order string, 'tp-cp-ep-dp-pp', with expert parallelism of
size 1, and refuses what it cannot lay out."""
import pytest

import gemmlab as gl

par = gl.parallel
SIZES = dict(tp=8, cp=2, dp=2, pp=4)


def test_megatrons_default_order_string_gives_the_same_grid():
    ours, megatron = par.RankGrid(**SIZES), par.RankGrid(**SIZES, order="tp-cp-ep-dp-pp")
    assert megatron.order == ours.order == ("tp", "cp", "dp", "pp")
    assert all(megatron.coords(r) == ours.coords(r) for r in range(ours.size))
    for axis in par.AXES:
        assert megatron.groups(axis) == ours.groups(axis)
    assert par.RankGrid(**SIZES, order="tp-cp-ep-dp-pp", ep=1).size == 128


def test_ep_may_sit_anywhere_in_the_order():
    grid = par.RankGrid(**SIZES, order="ep-tp-cp-dp-pp")
    assert grid.group("tp", 21) == par.RankGrid(**SIZES).group("tp", 21)


def test_expert_parallelism_above_one_is_refused():
    with pytest.raises(ValueError, match="ep=2: expert parallelism is not modelled"):
        par.RankGrid(**SIZES, order="tp-cp-ep-dp-pp", ep=2)


@pytest.mark.parametrize("order", ["tp-cp-ep-ep-dp-pp", "tp-cp-xp-dp-pp", "tp-cp-dp", "tp-tp-dp-pp"])
def test_bad_orders_are_refused_with_the_default_named(order):
    with pytest.raises(ValueError, match="tp-cp-ep-dp-pp"):
        par.RankGrid(**SIZES, order=order)
