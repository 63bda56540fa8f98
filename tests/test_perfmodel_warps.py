"""Warps: the hardware rules (sectors, banks) and the scheduler model, on cases worked by hand."""
import pytest

from gemmlab.perfmodel.warps import conflict_ways, sectors, warp_of, warp_schedule


def test_warp_and_lane_of_a_thread():
    assert warp_of(0) == (0, 0) and warp_of(31) == (0, 31) and warp_of(83) == (2, 19)


def test_sectors_of_neighbouring_and_strided_floats():
    assert len(sectors(range(32))) == 4                       # 128 contiguous bytes
    assert len(sectors([32 * t for t in range(32)])) == 32    # a row (128 B) apart
    assert len(sectors({0: 8, 1: 9})) == 1


def test_bank_conflicts_of_stride_32_and_33_and_a_broadcast():
    assert conflict_ways({t: 32 * t + 5 for t in range(32)}) == 32
    assert conflict_ways({t: 33 * t + 5 for t in range(32)}) == 1
    assert conflict_ways({t: 7 for t in range(32)}) == 1      # one word for all: a broadcast
    assert conflict_ways({t: 2 * t for t in range(32)}) == 2


def test_one_warp_waits_and_enough_warps_hide_the_latency():
    alone = warp_schedule(1, 10, 6)
    assert alone["issues"][0] == [6 * k for k in range(10)]
    assert alone["busy"] == pytest.approx(10 / 55)
    for warps in (6, 9):
        assert warp_schedule(warps, 10, 6)["busy"] == 1.0
    assert warp_schedule(3, 10, 6)["busy"] < 1.0
    with pytest.raises(ValueError):
        warp_schedule(0, 10, 6)
