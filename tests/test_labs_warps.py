"""The warp primitives' rules (gemmlab/labs/warps.py), on lanes as plain data: which lane a
shuffle reads, what each lane gets, and the named errors of a mask that cannot complete."""
import numpy as np
import pytest

from gemmlab.labs.warps import Request, WarpError, source_lane, step

SITE = "line 7 (`x = cuda.shfl_down_sync(0xFFFFFFFF, v, 1)`)"


def waiting(kind, lanes, mask=0xFFFFFFFF, values=None, arg=0):
    return {lane: Request(kind, mask, lane if values is None else values[lane], arg, SITE)
            for lane in lanes}


def test_a_shuffle_reads_the_lane_ptx_names_and_keeps_its_own_value_past_the_warp():
    assert [source_lane("shfl_sync", 3, 37)] == [5]                 # src & 31
    assert source_lane("shfl_up_sync", 2, 4) is None                 # below lane 0
    assert source_lane("shfl_down_sync", 30, 4) is None              # past lane 31
    assert source_lane("shfl_xor_sync", 5, 16) == 21
    lanes = dict.fromkeys(range(32))
    results, synced, blocked = step(lanes, waiting("shfl_down_sync", range(32), arg=4),
                                    lambda m: "")
    assert [results[m] for m in range(32)] == [m + 4 if m < 28 else m for m in range(32)]
    assert not synced and blocked == ""


def test_votes_and_ballot_have_numba_cudas_types():
    lanes = dict.fromkeys(range(32))
    flags = {m: m % 2 == 1 for m in range(32)}
    ballot, _, _ = step(lanes, waiting("ballot_sync", range(32), values=flags), lambda m: "")
    assert ballot[0] == np.int32(-1431655766) and ballot[0].dtype == np.int32   # 0xAAAAAAAA
    any_, _, _ = step(lanes, waiting("any_sync", range(32), values=flags), lambda m: "")
    all_, _, _ = step(lanes, waiting("all_sync", range(32), values=flags), lambda m: "")
    assert any_[5] is True and all_[5] is False


def test_activemask_is_the_lanes_that_arrive_at_the_same_call_together():
    requests = {m: Request("activemask", 0xFFFFFFFF, None, 0, "line 4" if m % 2 else "line 6")
                for m in range(32)}
    results, _, _ = step(dict.fromkeys(range(32)), requests, lambda m: "")
    assert results[0] == 0x55555555 and results[1] == 0xAAAAAAAA


def test_a_mask_naming_an_exited_lane_or_leaving_out_the_caller_is_a_named_error():
    lanes = dict.fromkeys(range(32))
    with pytest.raises(WarpError, match="names lane 16, but lane 16 has exited"):
        step(lanes, waiting("syncwarp", range(16)),
             lambda m: "has exited" if m >= 16 else "")
    with pytest.raises(WarpError, match="which does not name lane 3 itself"):
        step(lanes, waiting("syncwarp", [3], mask=0x1), lambda m: "")


def test_a_shuffle_from_a_lane_that_takes_no_part_is_a_named_error():
    lanes = dict.fromkeys(range(16))            # a block of 16 threads: lanes 16-31 do not exist
    with pytest.raises(WarpError, match="reads lane 16, but lane 16 does not exist"):
        step(lanes, waiting("shfl_down_sync", range(16), arg=8), lambda m: "")


def test_lanes_at_different_primitives_wait_and_say_why():
    requests = waiting("syncwarp", range(31))
    requests[31] = Request("ballot_sync", 0xFFFFFFFF, True, 0, "line 9")
    results, synced, blocked = step(dict.fromkeys(range(32)), requests, lambda m: "")
    assert results == {} and not synced
    assert "lane 31 at ballot_sync at line 9" in blocked
    assert "must all reach the same call with the same mask" in blocked


def test_disjoint_masks_complete_separately_and_syncwarp_counts():
    requests = {m: Request("syncwarp", 0x0000FFFF if m < 16 else 0xFFFF0000, None, 0, SITE)
                for m in range(32)}
    results, synced, blocked = step(dict.fromkeys(range(32)), requests, lambda m: "")
    assert sorted(results) == list(range(32)) and synced and blocked == ""
