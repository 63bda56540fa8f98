"""The cache stepper replays the simulator; the tile stepper counts what the tile model counts."""
import numpy as np
import pytest

import gemmlab as gl
from gemmlab.viz import cache, tiling

rng = np.random.default_rng()


def test_cache_stepper_replays_a_prefix_of_the_trace():
    trace = rng.integers(0, 64, size=12).tolist()
    w = cache.CacheStepper(trace, line_size=8, n_lines=2)
    assert w.state["misses"] == 0 and w.state["bytes_moved"] == 0
    for step in (5, 12):
        for lines in (1, 3):
            w.step.value, w.lines.value = step, lines
            expected = gl.perfmodel.simulate(trace[:step], 8, lines)
            assert (w.state["hits"], w.state["misses"], w.state["bytes_moved"]) == (
                expected.hits, expected.misses, expected.bytes_moved)
            assert f"{expected.bytes_moved} B</b>" in w.text.value


def test_tile_steps_accumulate_the_block_and_count_loads():
    M, K, N = (int(v) for v in rng.integers(3, 9, size=3))
    A, B = rng.integers(-5, 6, (M, K)), rng.integers(-5, 6, (K, N))
    rows, cols, kstep = range(1, min(3, M)), range(0, 2), int(rng.integers(1, 4))
    steps = tiling.tile_steps(A, B, rows, cols, kstep)
    np.testing.assert_array_equal(steps[-1]["partial"], (A @ B)[1:min(3, M), 0:2])
    assert steps[-1]["loaded_so_far"] == (len(rows) + len(cols)) * K
    assert steps[0]["loaded_without_reuse"] == len(rows) * len(cols) * 2 * K
    with pytest.raises(ValueError, match="inside C"):
        tiling.tile_steps(A, B, range(0, M + 1), cols, 2)


def test_tile_stepper_follows_its_slider():
    A, B = rng.integers(0, 9, (4, 8)), rng.integers(0, 9, (8, 4))
    w = tiling.TileStepper(A, B)
    assert w.state["loaded"] == 0 and w.step.max == 4
    w.step.value = 1
    assert w.state["loaded"] == 8
    w.step.value = 4
    assert w.state["finished"] and w.state["loaded"] == 32
    np.testing.assert_array_equal(w.state["block"], (A @ B)[:2, :2])
    assert "<b>32</b>" in w.text.value and "64" in w.text.value
