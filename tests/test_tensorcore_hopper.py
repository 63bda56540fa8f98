"""The Hopper ladder (lesson 12, part 2): the launch plans, the rule that picks them, the tile
order, split-K's ranges, the tensor-map parameters, the ring model and the source on any machine
(its compilation for sm_90a is in test_cudacompile.py); the kernels themselves on an sm_90 GPU
only."""
import dataclasses
import re

import numpy as np
import pytest

import gemmlab as gl
from gemmlab.perfmodel import HOPPER
from gemmlab.tensorcore import hopper


@pytest.mark.parametrize("stage", list(hopper.STAGES))
def test_every_stage_fits_in_one_block_of_shared_memory(stage):
    st = hopper.get_stage(stage)
    assert st.stage_bytes in ((128 * 64 + 64 * 256) * 2, (128 * 64 + 64 * 128) * 2)
    assert st.smem_bytes <= HOPPER.shared_bytes
    assert st.threads in (256, 384) and st.threads % 128 == 0     # whole warpgroups


@pytest.mark.parametrize("shape", list(hopper.SHAPES))
def test_each_tile_shape_keeps_a_deep_ring_in_one_block(shape):
    sh = hopper.SHAPES[shape]
    st = hopper.get_stage("persistent")
    assert hopper.stages.smem_bytes(st, sh) <= hopper.stages.SMEM_PER_BLOCK <= HOPPER.shared_bytes
    assert sh.stage_bytes == (sh.bm * 64 + 64 * sh.bn) * 2 and sh.buffers >= (3 if sh.staged else 4)
    if sh.staged:                       # the staging buffer takes the room of the fourth slice
        deeper = dataclasses.replace(sh, buffers=sh.buffers + 1)
        assert hopper.stages.smem_bytes(st, deeper) > hopper.stages.SMEM_PER_BLOCK
    elif sh.bm == 128:
        assert sh.buffers * sh.stage_bytes == 192 * 1024
    else:                               # decode (memory-bound): as many buffers as fit
        deeper = dataclasses.replace(sh, buffers=sh.buffers + 1)
        assert hopper.stages.smem_bytes(st, deeper) > hopper.stages.SMEM_PER_BLOCK
        assert sh.buffers * sh.stage_bytes > 192 * 1024


def test_the_decode_shapes_are_64_rows_that_one_warpgroup_computes():
    decode = {n: sh for n, sh in hopper.SHAPES.items() if sh.bm == 64}
    assert {(sh.bn, sh.buffers) for sh in decode.values()} == {(256, 5), (128, 9), (64, 14)}
    assert all(sh.parts == 1 and not sh.pingpong for sh in decode.values())
    assert {n: sh.parts for n, sh in hopper.SHAPES.items() if sh.bm == 128} == {
        "wide": 2, "narrow": 2, "slim": 2, "pingpong": 1, "wide_staged": 2, "wide_c2": 2,
        "wide_staged_c2": 2}
    # the ring holds more slices of B than the 128-row shape of the same width
    for sh in decode.values():
        same_width = next(s for s in hopper.SHAPES.values() if s.bm == 128 and s.bn == sh.bn)
        assert sh.buffers * sh.bn > same_width.buffers * same_width.bn


def test_four_buffers_are_the_most_that_fit():
    st = hopper.get_stage("tma")
    assert st.buffers == 4
    assert (st.buffers + 1) * st.stage_bytes > HOPPER.shared_bytes


PLANNED = [(stage, {}) for stage in hopper.STAGES] + [
    ("persistent", {"tile_m": 64, "tile_n": n}) for n in (256, 128, 64)]


@pytest.mark.parametrize("shape", [(4096, 4096, 4096), (131, 250, 77), (1, 1, 1), (300, 264, 0),
                                   (65, 8192, 8192), (64, 1001, 77)])
def test_plan_covers_the_output_and_pads_only_misaligned_dims(shape):
    M, N, K = shape
    for stage, options in PLANNED:
        p = hopper.plan(stage, M, N, K, sms=132, **options)
        tiles_m, tiles_n = p.tiles
        bm, bn = p.shape.bm, p.shape.bn
        assert bm == options.get("tile_m", 128)
        assert tiles_m * bm >= M > (tiles_m - 1) * bm or M == 0
        assert tiles_n * bn >= N > (tiles_n - 1) * bn or N == 0
        assert p.Np % 8 == 0 and p.Kp % 8 == 0 and 0 <= p.Np - N < 8 and 0 <= p.Kp - K < 8
        assert p.padded == (N % 8 != 0 or K % 8 != 0)
        if p.stage.persistent:
            assert p.grid == (min(132, tiles_m * tiles_n) or 1, 1, 1)
        else:
            assert p.grid == (tiles_n, tiles_m, 1)


@pytest.mark.parametrize("splits,slices", [(1, 7), (3, 7), (4, 64), (7, 7), (5, 13)])
def test_split_k_ranges_cover_k_once_and_evenly(splits, slices):
    ranges = [hopper.split_range(s, splits, slices) for s in range(splits)]
    assert ranges[0][0] == 0 and ranges[-1][1] == slices
    assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:], strict=False))          # no gap, no overlap
    sizes = [k1 - k0 for k0, k1 in ranges]
    assert max(sizes) - min(sizes) <= 1 and min(sizes) >= 1


def test_split_k_plans_count_units_and_workspace():
    p = hopper.plan("persistent", 128, 4096, 4096, tile_n=128, split_k=4)
    assert p.tiles == (1, 32) and p.units == 128 and p.grid == (128, 1, 1)
    assert p.partial_floats == 128 * 128 * 128 and p.counters == 64
    assert p.kernel == "hopper_persistent_n128"
    assert hopper.plan("pingpong", 8, 8, 8, out="fp16").kernel == "hopper_pingpong_o16"
    assert hopper.plan("persistent", 8, 8, 8).partial_floats == 0


@pytest.mark.parametrize("tile_n,buffers,name", [(256, 5, "hopper_persistent_m64"),
                                                  (128, 9, "hopper_persistent_m64_n128"),
                                                  (64, 14, "hopper_persistent_m64_n64")])
def test_decode_plans_cut_64_row_tiles(tile_n, buffers, name):
    p = hopper.plan("persistent", 65, 8192, 8192, tile_m=64, tile_n=tile_n, split_k=3, out="fp16")
    tiles_n = 8192 // tile_n
    assert (p.shape.bm, p.shape.bn, p.shape.buffers) == (64, tile_n, buffers)
    assert p.tiles == (2, tiles_n)                  # 65 rows: a second tile row for row 64
    assert p.units == 2 * tiles_n * 3 and p.grid == (min(132, p.units), 1, 1)
    assert p.partial_floats == p.units * 64 * tile_n    # one 64 x tile_n slot per unit
    assert p.counters == 2 * tiles_n                # one consumer warpgroup per tile
    assert p.shape.stage_bytes == (64 * 64 + 64 * tile_n) * 2
    assert p.smem_bytes == hopper.stages.smem_bytes(p.stage, p.shape)
    assert p.smem_bytes <= hopper.stages.SMEM_PER_BLOCK
    maps = p.tensor_maps()
    assert maps["A"] == {"dims": (8192, 65), "strides": (8192 * 2,), "box": (64, 64)}
    assert maps["B"] == {"dims": (8192, 8192), "strides": (8192 * 2,), "box": (64, 64)}
    assert p.kernel == name + "_o16" and hopper.plan("persistent", 8, 8, 8, tile_m=64,
                                                     tile_n=tile_n).kernel == name
    assert p.describe() == f"persistent (64x{tile_n} tiles, split_k=3, fp16 out)"
    fp8 = hopper.plan("persistent", 65, 8192, 8192, tile_m=64, tile_n=tile_n, out="fp16",
                      fmt="e4m3")
    assert fp8.tensor_maps()["A"]["box"] == (128, 64)             # 64 rows of 128 bytes
    assert fp8.tensor_maps()["B"]["box"] == (128, tile_n)
    assert fp8.smem_bytes == p.smem_bytes and fp8.kernel == name + "_ofp16"


def test_the_staged_epilogue_stages_a_whole_16_bit_tile_beside_three_slices():
    p = hopper.plan("persistent", 8192, 4096, 1024, out="fp16", epilogue="staged")
    sh = p.shape
    assert (sh.name, sh.bm, sh.bn, sh.buffers, sh.parts) == ("wide_staged", 128, 256, 3, 2)
    assert sh.staging_bytes == 128 * (256 * 2 + 16) and hopper.SHAPES["wide"].staging_bytes == 0
    # ring, its "full" and "empty" mbarriers, "turn" and split-K flags, then "staged", "drained"
    # and the "stores" flags, 1 KiB of alignment
    assert p.smem_bytes == 3 * 48 * 1024 + 128 * 528 + 6 * 8 + 24 + 24 + 1024 == 216160
    assert p.smem_bytes <= hopper.stages.SMEM_PER_BLOCK
    # the FP32 tile would not fit: 128 KiB beside the three slices
    assert 3 * sh.stage_bytes + 128 * 256 * 4 > hopper.stages.SMEM_PER_BLOCK
    assert (p.kernel, p.epilogue, p.tiles) == ("hopper_persistent_staged_o16", "staged", (64, 16))
    assert p.describe() == "persistent (128x256 tiles, fp16 out, staged epilogue)"
    assert hopper.plan("persistent", 8192, 4096, 1024, out="fp16").epilogue == "direct"
    assert hopper.plan("persistent", 8, 8, 8, out="bf16", epilogue="staged",
                       split_k=1).kernel == "hopper_persistent_staged_o16"
    assert [hopper.plan("persistent", 8, 8, 256, out=o, fmt="e4m3", epilogue="staged",
                        split_k=2).kernel for o in ("bf16", "fp16")] == [
        "hopper_persistent_staged_o16", "hopper_persistent_staged_ofp16"]
    assert hopper.plan("persistent", 8, 8, 8, out="fp16", epilogue="staged").tensor_maps() \
        == hopper.plan("persistent", 8, 8, 8, out="fp16").tensor_maps()       # same tiles


def test_a_warps_staged_pairs_fall_on_32_banks():
    # lane l of a consumer warp writes the packed pair of row l / 4, columns 8j + 2(l % 4) + {0, 1}
    # (hopper_gemm.cu's stage_rows): with 528-byte rows, every 4-byte store of a warp hits its own
    # bank; unpadded 512-byte rows would put the 8 rows on the same 4 banks
    pitch = hopper.SHAPES["wide_staged"].staging_bytes // 128
    for j in range(32):
        banks = {(lane // 4 * pitch + 16 * j + 4 * (lane % 4)) // 4 % 32 for lane in range(32)}
        assert len(banks) == 32
    assert len({(lane // 4 * 512 + 4 * (lane % 4)) // 4 % 32 for lane in range(32)}) == 4


@pytest.mark.parametrize("stage,options,match", [
    ("persistent", {"out": "fp32"}, "needs 16-bit output"),
    ("persistent", {"out": "fp16", "tile_n": 128}, "128 x 256 tiles only"),
    ("persistent", {"out": "fp16", "tile_m": 64}, "128 x 256 tiles only"),
    ("pingpong", {"out": "fp16"}, "128 x 256 tiles only"),
    ("auto", {"out": "fp16"}, "stage='auto' picks its own plan"),
    ("ws", {}, "takes no options"),
    ("persistent", {"out": "fp16", "fmt": "e4m3", "promote": True}, "promote=True"),
])
def test_the_staged_epilogue_is_refused_where_it_is_not_built(stage, options, match):
    with pytest.raises(ValueError, match=match):
        hopper.plan(stage, 64, 512, 512, epilogue="staged", **options)
    with pytest.raises(ValueError, match="epilogue must be one of direct, staged"):
        hopper.plan("persistent", 64, 512, 512, epilogue="smem")


def test_clusters_of_two_share_b_between_two_tile_rows():
    wide = hopper.plan("persistent", 4096, 4096, 4096)
    p = hopper.plan("persistent", 4096, 4096, 4096, cluster=2)
    assert (p.shape.name, p.shape.cluster, p.kernel) == ("wide_c2", 2, "hopper_persistent_c2")
    # the same tiles, boxes and shared memory: only who copies B's boxes changes
    assert (p.tiles, p.tensor_maps(), p.smem_bytes) == (wide.tiles, wide.tensor_maps(),
                                                        wide.smem_bytes)
    assert p.describe() == "persistent (128x256 tiles, clusters of 2, B multicast)"
    # whole clusters: 1031 rows are 9 tile rows, 5 pairs (the last tile of a pair past M) x 4
    # columns = 20 units, 40 blocks; never more blocks than SMs, never half a cluster
    assert hopper.plan("persistent", 1031, 997, 1043, cluster=2).grid == (40, 1, 1)
    assert hopper.plan("persistent", 8, 8, 8, cluster=2).grid == (2, 1, 1)
    assert p.grid == (132, 1, 1)
    assert hopper.plan("persistent", 4096, 4096, 4096, sms=133, cluster=2).grid == (132, 1, 1)
    staged = hopper.plan("persistent", 4096, 4096, 4096, out="fp16", epilogue="staged", cluster=2)
    assert (staged.shape.name, staged.kernel) == ("wide_staged_c2", "hopper_persistent_staged_c2_o16")
    assert staged.smem_bytes == hopper.plan("persistent", 4096, 4096, 4096, out="fp16",
                                            epilogue="staged").smem_bytes
    assert hopper.plan("persistent", 64, 512, 512, out="bf16", cluster=2).kernel \
        == "hopper_persistent_c2_o16"
    # FP8: B is one box of 256 rows (N x K); in a cluster each block copies a box of 128 rows
    fp8 = hopper.plan("persistent", 4096, 4096, 4096, fmt="e4m3", out="fp16", cluster=2)
    assert fp8.kernel == "hopper_persistent_c2_ofp16"
    assert fp8.tensor_maps()["B"]["box"] == (128, 128)
    assert hopper.plan("persistent", 4096, 4096, 4096, fmt="e4m3").tensor_maps()["B"]["box"] \
        == (128, 256)


@pytest.mark.parametrize("stage,options,match", [
    ("persistent", {"tile_n": 128}, "not for 'persistent' with 128 x 128 tiles"),
    ("persistent", {"tile_m": 64}, "not for 'persistent' with 64 x 256 tiles"),
    ("persistent", {"split_k": 2}, "split_k=2"),
    ("persistent", {"fmt": "e4m3", "tile_n": 128, "promote": True}, "promote=True"),
    ("pingpong", {}, "not for 'pingpong'"),
    ("auto", {}, "stage='auto' picks its own plan"),
    ("ws", {}, "takes no options"),
])
def test_clusters_are_refused_where_they_are_not_built(stage, options, match):
    with pytest.raises(ValueError, match=match):
        hopper.plan(stage, 64, 512, 512, cluster=2, **options)
    with pytest.raises(ValueError, match="cluster must be one of 1, 2, got 4"):
        hopper.plan("persistent", 64, 512, 512, cluster=4)


def test_tile_m_128_is_the_default_shape():
    for tile_n, name in ((None, "wide"), (256, "wide"), (128, "narrow"), (64, "slim")):
        assert hopper.plan("persistent", 64, 512, 512, tile_m=128, tile_n=tile_n).shape \
            == hopper.plan("persistent", 64, 512, 512, tile_n=tile_n).shape == hopper.SHAPES[name]


def test_options_are_refused_where_they_do_not_apply():
    with pytest.raises(ValueError, match="leaves splits without work"):
        hopper.plan("persistent", 128, 128, 256, split_k=5)          # 4 slices of 64
    with pytest.raises(ValueError, match="takes no options"):
        hopper.plan("ws", 128, 128, 256, split_k=2)
    with pytest.raises(ValueError, match="tile_n=96"):
        hopper.plan("persistent", 128, 128, 256, tile_n=96)
    with pytest.raises(ValueError, match="tile_n=128"):
        hopper.plan("pingpong", 128, 128, 256, tile_n=128)
    with pytest.raises(ValueError, match="out must be one of"):
        hopper.plan("persistent", 128, 128, 256, out="fp8")
    with pytest.raises(ValueError, match="split_k must be"):
        hopper.plan("persistent", 128, 128, 256, split_k=0)


@pytest.mark.parametrize("stage,options,match", [
    ("persistent", {"tile_m": 32}, "tile_m=32: the persistent stage takes 128 or 64"),
    ("pingpong", {"tile_m": 64}, "tile_m=64: the persistent stage"),   # owns whole 128-row tiles
    ("ws", {"tile_m": 64}, "takes no options"),
    ("auto", {"tile_m": 64}, "stage='auto' picks its own tiles"),
    ("persistent", {"tile_m": 64, "tile_n": 128, "fmt": "e4m3", "promote": True}, "promote=True"),
])
def test_64_row_tiles_are_refused_where_they_are_not_built(stage, options, match):
    with pytest.raises(ValueError, match=match):
        hopper.plan(stage, 64, 128, 256, **options)


@pytest.mark.parametrize("shape,tile_m,tile_n,split_k", [
    ((128, 4096, 4096), 64, 64, 1),     # 128 tiles of 64 x 64 fill the SMs: no split
    ((1024, 1024, 1024), 128, 64, 1),   # 128 slim tiles; 16 slices: too short to split
    ((8192, 4096, 1024), 128, 256, 1),  # many tiles: the wide ones
    ((4096, 11008, 4096), 128, 256, 1),
    ((8192, 8192, 8192), 128, 256, 1),
    ((2048, 2048, 2048), 128, 256, 1),  # 128 wide tiles leave 4 of 132 SMs idle: a full wave
    ((64, 8192, 8192), 64, 64, 1),      # decode: 128 tiles of 64 x 64, no split needed
    ((16, 8192, 8192), 64, 64, 1),
    ((64, 4096, 8192), 64, 64, 2),      # decode, 64 tiles: split 2 ways of 64 slices
    ((65, 8192, 8192), 128, 128, 2),    # 65 rows: two 128-row tile rows, 64 narrow tiles x 2
    ((131, 250, 77), 128, 64, 1),       # too little K to split
])
def test_the_rule_picks_the_widest_tiles_that_fill_the_sms(shape, tile_m, tile_n, split_k):
    picked = hopper.choose(*shape, sms=132)
    assert (picked["stage"], picked["tile_m"], picked["tile_n"], picked["split_k"]) == \
        ("persistent", tile_m, tile_n, split_k)
    p = hopper.plan("auto", *shape, sms=132)
    assert (p.shape.bm, p.shape.bn, p.split_k) == (tile_m, tile_n, split_k)
    assert picked["epilogue"] == p.epilogue == "direct"                 # FP32 out: no staging
    assert p.units <= 132 or p.tiles[0] * p.tiles[1] >= 132        # one wave, or more tiles
    assert picked["cluster"] == p.shape.cluster == (2 if (tile_m, tile_n, split_k) == (128, 256, 1)
                                                    else 1)
    k_slices = -(-shape[2] // 64)
    assert split_k == 1 or k_slices // split_k >= hopper.stages.MIN_SPLIT_SLICES
    assert tile_n == 64 or split_k == 1 or k_slices // split_k >= hopper.stages.LONG_SPLIT_SLICES


@pytest.mark.parametrize("shape,staged", [
    ((8192, 4096, 1024), True), ((4096, 4096, 4096), True), ((8192, 8192, 8192), True),
    ((2048, 2048, 2048), False),        # 128 tiles, one wave: no next tile to overlap
    ((1024, 1024, 1024), False),        # 128 x 64 tiles: the staged kernel is 128 x 256 only
])
@pytest.mark.parametrize("fmt,out", [("fp16", "fp16"), ("bf16", "bf16"), ("e4m3", "bf16"),
                                     ("e4m3", "fp16")])
def test_the_rule_stages_16_bit_stores_where_blocks_walk_several_wide_tiles(shape, staged, fmt,
                                                                            out):
    picked = hopper.choose(*shape, sms=132, fmt=fmt, out=out)
    assert picked["epilogue"] == ("staged" if staged else "direct")
    p = hopper.plan("auto", *shape, fmt=fmt, out=out)
    assert p.epilogue == picked["epilogue"] and p.shape.staged == staged
    assert hopper.choose(*shape, sms=132, fmt=fmt)["epilogue"] == "direct"    # FP32 out
    # unsplit wide tiles, staged or not, run in clusters of two that share B
    assert picked["cluster"] == p.shape.cluster == (2 if p.shape.bn == 256 else 1)


def test_the_rule_follows_the_sm_count():
    assert hopper.choose(128, 4096, 4096, sms=64)["split_k"] == 1             # 64 tiles: a wave
    assert hopper.choose(128, 8192, 8192, sms=32)["split_k"] == 1             # 32 wide tiles
    assert hopper.choose(128, 8192, 8192, sms=132)["split_k"] == 2            # ... split 2 ways
    assert hopper.choose(128, 4096, 8192, sms=132)["split_k"] == 2            # 128 slices, 2 fit
    assert hopper.choose(1024, 1024, 1024, sms=32)["tile_n"] == 256           # 32 wide tiles


def test_tensor_maps_meet_the_tma_rules():
    maps = hopper.plan("ws", 131, 250, 77).tensor_maps()
    for m in maps.values():
        assert all(s % 16 == 0 for s in m["strides"])         # 16-byte global strides
        assert m["box"][0] * hopper.ELEM_BYTES == 128           # one 128-byte swizzled row
        assert all(b <= 256 for b in m["box"])
    assert maps["A"]["dims"] == (80, 131) and maps["B"]["dims"] == (256, 80)


def test_the_fp8_rung_plans_128_deep_slices_and_a_transposed_b():
    p = hopper.plan("persistent", 131, 250, 77, fmt="e4m3")
    assert (p.Kp, p.Np, p.bk, p.k_slices) == (80, 250, 128, 1)     # 16-byte rows of bytes
    maps = p.tensor_maps()
    assert maps["A"] == {"dims": (80, 131), "strides": (80,), "box": (128, 128)}
    assert maps["B"] == {"dims": (80, 250), "strides": (80,), "box": (128, 256)}    # N x Kp
    assert p.smem_bytes == hopper.plan("persistent", 131, 250, 77).smem_bytes    # same bytes
    assert hopper.plan("pingpong", 8, 8, 4096, fmt="e4m3").k_slices == 32
    assert hopper.build.kernel_name(p.kernel, "e4m3") == "hopper_persistent_e4m3"
    with pytest.raises(ValueError, match="no FP8 build"):
        hopper.plan("tma", 8, 8, 8, fmt="e4m3")
    assert [hopper.plan("persistent", 8, 8, 8, out=o, fmt="e4m3").kernel for o in hopper.OUTPUTS] \
        == ["hopper_persistent", "hopper_persistent_ofp16", "hopper_persistent_o16"]
    for bad in ({"fmt": "fp16"}, {"fmt": "e4m3"}, {"fmt": "e4m3", "tile_n": 256}):
        with pytest.raises(ValueError, match="promote=True"):
            hopper.plan("persistent", 8, 8, 8, promote=True, **bad)
    promoted = hopper.plan("auto", 4096, 4096, 4096, fmt="e4m3", promote=True)
    assert (promoted.shape.bn, promoted.kernel) == (128, "hopper_persistent_n128_promoted")
    with pytest.raises(ValueError, match="slice"):
        hopper.plan("persistent", 8, 8, 128, split_k=2, fmt="e4m3")   # one slice of 128


def test_the_rule_splits_fp8_k_by_the_same_depth_in_values():
    # a decode shape: 128 tiles of 128 x 64 (FP8) or 64 x 64 (16-bit), K = 8192 allows 4 splits
    # of 2048 either way
    assert hopper.choose(64, 8192, 8192, sms=512)["split_k"] == 4
    assert hopper.choose(64, 8192, 8192, sms=512, fmt="e4m3")["split_k"] == 4
    assert hopper.choose(64, 8192, 8192, sms=512, fmt="e4m3")["tile_m"] == 64
    promoted = hopper.choose(64, 8192, 8192, sms=512, fmt="e4m3", promote=True)
    assert promoted["tile_m"] == 128             # the 64-row tiles are built without promotion


def test_plan_rejects_bad_sizes_and_names():
    with pytest.raises(ValueError, match="M must be"):
        hopper.plan("ws", -1, 8, 8)
    with pytest.raises(ValueError, match="K must be"):
        hopper.plan("ws", 8, 8, 2.5)
    with pytest.raises(ValueError, match="unknown Hopper stage 'fast'"):
        hopper.plan("fast", 8, 8, 8)


@pytest.mark.parametrize("tiles", [(32, 16), (3, 5), (9, 7), (1, 1), (17, 2)])
@pytest.mark.parametrize("group_m", [1, 4, 8])
def test_grouped_tile_order_visits_every_tile_once(tiles, group_m):
    tiles_m, tiles_n = tiles
    order = [hopper.tile_coords(t, tiles_m, tiles_n, group_m) for t in range(tiles_m * tiles_n)]
    assert sorted(order) == [(m, n) for m in range(tiles_m) for n in range(tiles_n)]
    # consecutive tiles stay inside one group of tile rows (that is what reuses L2)
    for t, (m, _) in enumerate(order):
        assert m // group_m == t // (group_m * tiles_n)


def test_source_has_the_hopper_instructions_written_out():
    src = hopper.kernel_source()
    for kind in ("k16.f32.f16.f16", "k16.f32.bf16.bf16", "k32.f32.e4m3.e4m3"):    # one per build
        assert f'"wgmma.mma_async.sync.aligned.m64n" N "{kind} "' in src
    for n in (256, 128, 64):
        assert f'WGMMA_OP("{n}")' in src
    # the 128 accumulators of m64n256 in hopper_gemm.cu, the 64 of WGMMA_D64 in hopper_common.cuh
    assert len(re.findall(r'"\+f"\(d\[\d+\]\)', src)) == 128 + 64
    for instruction in ("cp.async.bulk.tensor.2d", "mbarrier.try_wait.parity",
                        "mbarrier.arrive.expect_tx", "setmaxnreg.inc", "fence.proxy.async",
                        "atomicAdd", "__threadfence"):
        assert instruction in src, instruction
    assert "@WGMMA@" not in src and "#include" not in src
    for name in ("wgmma", "tma", "ws"):
        assert f"HOPPER_NAME(hopper_{name})" in src
    for name in ("persistent", "persistent_n128", "persistent_n64", "pingpong", "persistent_m64",
                 "persistent_m64_n128", "persistent_m64_n64", "persistent_staged"):
        assert f"HOPPER_PERSISTENT(hopper_{name}##SUFFIX," in src
    # the entry points each build has are compared with the plans' names in test_cudacompile.py


def test_unknown_format_is_refused():
    with pytest.raises(ValueError, match="fp8"):
        hopper.build.options("fp8")


def test_source_of_returns_one_named_function():
    text = hopper.source_of("produce")
    assert text.lstrip().startswith("//") and "void produce(" in text and text.endswith("}\n")
    assert "void consume(" not in text
    with pytest.raises(ValueError, match="no function 'nope'"):
        hopper.source_of("nope")


def test_ring_model_refills_a_slot_only_after_its_slice_was_computed():
    events = hopper.ring_events(10, 0.2, 0.5, stages=3, latency=1.0)
    by_slot = {}
    for e in events:
        assert e.load_start < e.full_at <= e.compute_start < e.empty_at
        assert e.slot == e.slice % 3 and e.phase == e.slice // 3
        if e.slot in by_slot:
            assert e.load_start >= by_slot[e.slot].empty_at      # the "empty" barrier
        by_slot[e.slot] = e
    for a, b in zip(events, events[1:], strict=False):
        assert b.compute_start >= a.empty_at                      # one consumer, in order


def test_more_stages_hide_latency_until_compute_bound():
    times = [gl.perfmodel.pipeline_time(64, 0.2, 0.55, s, latency=1.0) for s in (1, 2, 3, 4, 6)]
    assert times[0] == pytest.approx(64 * (0.2 + 1.0 + 0.55))
    assert times[0] > times[1] > times[2] > times[3]
    assert times[3] == times[4] == pytest.approx(0.2 + 1.0 + 64 * 0.55)


def test_inputs_must_be_16_bit():
    with pytest.raises(TypeError, match="FP16 or BF16"):
        hopper.operands.input_format(np.zeros((2, 2), np.float32), "A")


@pytest.mark.skipif(gl.device.backend() == "gpu", reason="checks the message off the GPU")
def test_running_off_the_gpu_says_why():
    ok, reason = hopper.available()
    assert not ok and "sm_90" in reason
    with pytest.raises(RuntimeError, match="cannot run"):
        hopper.gemm(np.zeros((8, 8), np.float16), np.zeros((8, 8), np.float16))


def _needs_sm90():
    ok, reason = hopper.available()
    return pytest.mark.skipif(not ok, reason=f"needs an sm_90 GPU ({reason})")


GPU_CONFIGS = [(s, {}) for s in hopper.STAGES] + [
    ("persistent", {"tile_n": 128}), ("persistent", {"split_k": 3}),
    ("persistent", {"tile_n": 128, "split_k": 4}), ("persistent", {"tile_n": 64, "split_k": 2}),
    ("pingpong", {"split_k": 2}), ("auto", {}),
    ("persistent", {"tile_m": 64}), ("persistent", {"tile_m": 64, "tile_n": 128, "split_k": 3}),
    ("persistent", {"tile_m": 64, "tile_n": 64, "split_k": 2}), ("persistent", {"cluster": 2})]


FP8_CONFIGS = [("persistent", {}), ("persistent", {"tile_n": 128}), ("persistent", {"tile_n": 64}),
               ("persistent", {"split_k": 2}), ("pingpong", {}), ("auto", {}),
               ("persistent", {"tile_n": 128, "split_k": 2}),        # the auto plan at decode
               ("persistent", {"tile_n": 128, "promote": True}),
               ("persistent", {"tile_n": 128, "promote": True, "split_k": 2}),
               ("persistent", {"tile_n": 64, "promote": True, "split_k": 2}),
               ("auto", {"promote": True}), ("persistent", {"tile_m": 64}),
               ("persistent", {"tile_m": 64, "tile_n": 128, "split_k": 2}),
               ("persistent", {"tile_m": 64, "tile_n": 64})]


def _fp8_operands(M, N, K, seed):
    import ml_dtypes
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((M, K)).astype(ml_dtypes.float8_e4m3fn),
            rng.standard_normal((K, N)).astype(ml_dtypes.float8_e4m3fn))


def _rel(out, ref):
    return np.linalg.norm(out.astype(np.float64) - ref) / np.linalg.norm(ref)


@_needs_sm90()
@pytest.mark.parametrize("stage,options", FP8_CONFIGS)
@pytest.mark.parametrize("shape", [(200, 264, 144), (131, 251, 77), (1031, 997, 1043)])
def test_the_fp8_rung_matches_float64_of_its_inputs_at_odd_shapes(stage, options, shape):
    # FP8 wgmma sums with fewer bits than FP32: on the H200 the product of unit normals is off by
    # 1.2e-4 (relative, in norm) after one 128-deep slice, and by 5.5e-4 at K = 1043 when the
    # Tensor Core also carries the running sum (the fast mode); promoted stays at 1.3e-4.
    import ml_dtypes
    M, N, K = shape
    A, B = _fp8_operands(M, N, K, seed=M * 5 + K)
    C = np.random.default_rng(K).standard_normal((M, N)).astype(np.float32)
    if "split_k" in options:
        options = {**options, "split_k": min(options["split_k"], -(-K // hopper.FP8_BK))}
    ref = 0.25 * (A.astype(np.float64) @ B.astype(np.float64)) + 0.5 * C   # alpha = s_a s_b
    out = hopper.gemm(A, B, C, alpha=0.25, beta=0.5, stage=stage, **options)
    assert out.dtype == np.float32 and not np.isnan(out).any()
    assert _rel(out, ref) < (2e-4 if options.get("promote") else 1e-3)
    out16 = hopper.gemm(A, B, C, alpha=0.25, beta=0.5, stage=stage, out="bf16", **options)
    assert out16.dtype == ml_dtypes.bfloat16
    assert _rel(out16, ref) < 4e-3                  # BF16 rounding: 2^-9 at most per element
    half = hopper.gemm(A, B, C, alpha=0.25, beta=0.5, stage=stage, out="fp16", **options)
    assert half.dtype == np.float16
    assert _rel(half, ref) < (5e-4 if options.get("promote") else 1.2e-3)     # + 2^-12


@_needs_sm90()
def test_fp8_fast_sums_drift_with_k_and_promotion_stops_the_drift():
    errors = {}
    for K in (1024, 8192):
        A, B = _fp8_operands(256, 256, K, seed=K)
        ref = A.astype(np.float64) @ B.astype(np.float64)
        for promote in (False, True):
            out = hopper.gemm(A, B, stage="persistent", tile_n=128, promote=promote)
            errors[K, promote] = _rel(out, ref)
    assert errors[8192, False] > 2 * errors[1024, False]          # measured: 5e-4 -> 2e-3
    assert errors[8192, True] < 2e-4 and errors[1024, True] < 2e-4
    assert errors[8192, True] < errors[8192, False] / 5


def _random_problem(M, N, K, fmt, seed):
    """Random normal A (M x K) and B (K x N) in ``fmt``, C (M x N) in FP32, and the 16-bit type."""
    import ml_dtypes
    rng = np.random.default_rng(seed)
    dt = np.float16 if fmt == "fp16" else ml_dtypes.bfloat16
    A = rng.standard_normal((M, K)).astype(dt)
    B = rng.standard_normal((K, N)).astype(dt)
    return A, B, rng.standard_normal((M, N)).astype(np.float32), dt


@_needs_sm90()
@pytest.mark.parametrize("stage,options", GPU_CONFIGS)
@pytest.mark.parametrize("fmt", list(hopper.FORMATS))
@pytest.mark.parametrize("shape", [(200, 264, 136), (131, 251, 77), (1031, 997, 1043)])
def test_kernel_matches_float64_at_odd_shapes(stage, options, fmt, shape):
    M, N, K = shape
    A, B, C, dt = _random_problem(M, N, K, fmt, seed=M * 7 + N)
    if "split_k" in options:                        # no more splits than K has slices
        options = {**options, "split_k": min(options["split_k"], -(-K // hopper.BK))}
    out = hopper.gemm(A, B, C, alpha=0.5, beta=-2.0, stage=stage, **options)
    ref = 0.5 * (A.astype(np.float64) @ B.astype(np.float64)) - 2.0 * C
    assert not np.isnan(out).any()                  # the output was poisoned with NaN
    assert np.linalg.norm(out - ref) / np.linalg.norm(ref) < 1e-5
    out16 = hopper.gemm(A, B, C, alpha=0.5, beta=-2.0, stage=stage, out=fmt, **options) \
        if hopper.get_stage(hopper.plan(stage, M, N, K).stage.name).persistent else None
    if out16 is not None:
        assert out16.dtype == dt and not np.isnan(out16.astype(np.float32)).any()
        assert np.linalg.norm(out16.astype(np.float64) - ref) / np.linalg.norm(ref) < 4e-3


DECODE_CONFIGS = [{"tile_m": 64, "tile_n": n, "split_k": s} for n in (256, 128, 64) for s in (1, 3)]


@_needs_sm90()
@pytest.mark.parametrize("options", DECODE_CONFIGS,
                         ids=lambda o: f"{o['tile_n']}-split{o['split_k']}")
@pytest.mark.parametrize("fmt", list(hopper.FORMATS))
@pytest.mark.parametrize("M", [1, 17, 63, 64, 65])
def test_decode_tiles_match_float64_at_few_rows(options, fmt, M):
    # 64-row tiles: one consumer warpgroup per tile, the other idle. Rows past M are the TMA's
    # zeros and must not be stored; M = 65 puts one row in a second tile row. N and K odd: the
    # padded path, a partial last tile column and a partial last slice; K = 1031 is 17 slices,
    # split 3 ways unevenly (5, 6, 6).
    N, K = 1003, 1031
    A, B, C, dt = _random_problem(M, N, K, fmt, seed=M * 11 + options["tile_n"])
    ref = 0.5 * (A.astype(np.float64) @ B.astype(np.float64)) + 0.75 * C
    out = hopper.gemm(A, B, C, alpha=0.5, beta=0.75, stage="persistent", **options)
    assert out.shape == (M, N) and not np.isnan(out).any()
    assert _rel(out, ref) < 1e-5
    again = hopper.gemm(A, B, C, alpha=0.5, beta=0.75, stage="persistent", **options)
    assert np.array_equal(out, again)               # split-K adds in split order every time
    out16 = hopper.gemm(A, B, C, alpha=0.5, beta=0.75, stage="persistent", out=fmt, **options)
    assert out16.dtype == dt and not np.isnan(out16.astype(np.float32)).any()
    assert _rel(out16, ref) < 4e-3


# (2051, 3001, 136): 204 tiles, more than the SMs, so a block hands the staging buffer back and
# forth over several tiles (and with split-K over units it does not store)
STAGED_SHAPES = [(1, 1031, 77), (17, 264, 1043), (131, 251, 77), (1031, 997, 1043),
                 (2051, 3001, 136)]


@_needs_sm90()
@pytest.mark.parametrize("split_k", [1, 3])
@pytest.mark.parametrize("fmt", list(hopper.FORMATS))
@pytest.mark.parametrize("shape", STAGED_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_the_staged_epilogue_gives_the_direct_ones_bits(shape, fmt, split_k):
    # The same sums, scaled, added to beta C_in and rounded by the same instructions: the same
    # bits as the direct epilogue (checked against float64 above), and against float64 here too.
    # M = 1 and 17: rows past M are staged but not stored; N odd: element by element stores.
    M, N, K = shape
    A, B, C, dt = _random_problem(M, N, K, fmt, seed=M * 13 + N)
    options = {"stage": "persistent", "out": fmt, "split_k": min(split_k, -(-K // hopper.BK))}
    for alpha, beta in ((1.0, 0.0), (0.5, -2.0)):
        staged = hopper.gemm(A, B, C, alpha, beta, epilogue="staged", **options)
        assert staged.dtype == dt and not np.isnan(staged.astype(np.float32)).any()   # poisoned
        direct = hopper.gemm(A, B, C, alpha, beta, **options)
        assert np.array_equal(staged.view(np.uint16), direct.view(np.uint16)), (alpha, beta)
    ref = 0.5 * (A.astype(np.float64) @ B.astype(np.float64)) - 2.0 * C
    assert _rel(staged, ref) < 4e-3


@_needs_sm90()
@pytest.mark.parametrize("fmt", list(hopper.FORMATS))
@pytest.mark.parametrize("shape", [(131, 251, 77), (1031, 997, 1043), (2051, 3001, 136),
                                   (4096, 4096, 512)], ids=lambda s: "x".join(map(str, s)))
def test_clusters_give_the_unclustered_kernels_bits(shape, fmt):
    # Each tile's sums come from the same wgmmas in the same order, only B's copies differ: the
    # same bits, FP32 or 16-bit, direct or staged. 1031 and 2051 rows are 9 and 17 tile rows: the
    # last cluster's second tile lies past M. 2051 x 3001 and 4096^2 give each cluster many units.
    M, N, K = shape
    A, B, C, dt = _random_problem(M, N, K, fmt, seed=M * 17 + N)
    ref = 0.5 * (A.astype(np.float64) @ B.astype(np.float64)) - 2.0 * C
    for options in ({}, {"out": fmt}, {"out": fmt, "epilogue": "staged"}):
        for alpha, beta in ((1.0, 0.0), (0.5, -2.0)):
            paired = hopper.gemm(A, B, C, alpha, beta, stage="persistent", cluster=2, **options)
            alone = hopper.gemm(A, B, C, alpha, beta, stage="persistent", **options)
            assert not np.isnan(paired.astype(np.float32)).any()     # the output was poisoned
            assert np.array_equal(paired.view(np.uint8), alone.view(np.uint8)), (options, beta)
        assert _rel(paired, ref) < (4e-3 if options else 1e-5), options


@_needs_sm90()
@pytest.mark.parametrize("shape", [(1031, 997, 1043), (2051, 3001, 144)],
                         ids=lambda s: "x".join(map(str, s)))
def test_fp8_clusters_give_the_unclustered_kernels_bits(shape):
    # FP8's B is N x K: each block of a cluster copies 128 of a tile's 256 rows of B for both
    M, N, K = shape
    A, B = _fp8_operands(M, N, K, seed=M + 3 * N)
    C = np.random.default_rng(K).standard_normal((M, N)).astype(np.float32)
    ref = 0.25 * (A.astype(np.float64) @ B.astype(np.float64)) + 0.5 * C
    for options in ({}, {"out": "bf16"}, {"out": "fp16", "epilogue": "staged"}):
        paired = hopper.gemm(A, B, C, 0.25, 0.5, stage="persistent", cluster=2, **options)
        alone = hopper.gemm(A, B, C, 0.25, 0.5, stage="persistent", **options)
        assert not np.isnan(paired.astype(np.float32)).any()
        assert np.array_equal(paired.view(np.uint8), alone.view(np.uint8)), options
        assert _rel(paired, ref) < 4e-3, options


@_needs_sm90()
@pytest.mark.parametrize("split_k", [1, 2])
@pytest.mark.parametrize("shape", [(17, 251, 300), (1031, 997, 1043), (2051, 3001, 144)],
                         ids=lambda s: "x".join(map(str, s)))
def test_the_fp8_staged_epilogue_gives_the_direct_ones_bits(shape, split_k):
    M, N, K = shape
    A, B = _fp8_operands(M, N, K, seed=M + N)
    C = np.random.default_rng(K).standard_normal((M, N)).astype(np.float32)
    ref = 0.25 * (A.astype(np.float64) @ B.astype(np.float64)) + 0.5 * C
    for out in ("bf16", "fp16"):
        options = {"stage": "persistent", "out": out, "split_k": split_k}
        staged = hopper.gemm(A, B, C, alpha=0.25, beta=0.5, epilogue="staged", **options)
        assert not np.isnan(staged.astype(np.float32)).any()
        direct = hopper.gemm(A, B, C, alpha=0.25, beta=0.5, **options)
        assert np.array_equal(staged.view(np.uint16), direct.view(np.uint16)), out
        assert _rel(staged, ref) < 4e-3


def test_gemm_kernel_hopper_on_the_simulator_emulates_the_tensor_core_sums():
    if gl.device.backend() == "gpu":
        pytest.skip("the simulator path")
    rng = np.random.default_rng(5)
    A = rng.standard_normal((33, 40)).astype(np.float16)
    B = rng.standard_normal((40, 29)).astype(np.float16)
    C = rng.standard_normal((33, 29)).astype(np.float32)
    out = gl.gemm(A, B, C, alpha=2.0, beta=-1.0, kernel="hopper", stage="tma")
    assert np.array_equal(out, gl.tensorcore.emulate_steps(A, B, C, 2.0, -1.0))
    ref = 2.0 * (A.astype(np.float64) @ B.astype(np.float64)) - C
    assert np.abs(out - ref).max() < 1e-4
    with pytest.raises(ValueError, match="unknown Hopper stage"):
        gl.gemm(A, B, kernel="hopper", stage="fast")
    with pytest.raises(TypeError, match="FP16 or BF16"):
        gl.gemm(A.astype(np.float32), B, kernel="hopper")


@pytest.mark.skipif(gl.device.backend() == "gpu", reason="the simulator backend's refusal")
def test_fp8_inputs_off_an_sm90_gpu_are_refused_not_emulated():
    import ml_dtypes
    A = np.zeros((8, 16), ml_dtypes.float8_e4m3fn)
    with pytest.raises(RuntimeError, match="FP8 inputs run on an sm_90 GPU only"):
        gl.tensorcore.hopper_gemm(A, A.T.copy())
