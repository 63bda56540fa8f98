"""One block of a simulated launch as plain data (gemmlab/labs/observed.py): which block is kept,
what its accesses, barriers, fault and race say, that it survives JSON, and that a block that
accesses without end is cut short rather than filling memory."""
import json

import numpy as np
import pytest
from numba import float32

import gemmlab as gl

if gl.device.backend() != "sim":
    pytest.skip("the instrumented simulator runs on the simulator backend", allow_module_level=True)
from gemmlab.labs import observed  # noqa: E402
from gemmlab.labs.simulator import simulate  # noqa: E402

cuda = gl.device.cuda()


@cuda.jit
def neighbours(a, out):
    s = cuda.shared.array(8, float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * 8 + t
    s[t] = a[i] if i < a.shape[0] else 0
    cuda.syncthreads()
    if i < a.shape[0]:
        out[i] = s[(t + 1) % 8]


@cuda.jit
def unguarded(a, out):
    i = cuda.blockIdx.x * 8 + cuda.threadIdx.x
    out[i] = a[i]


@cuda.jit
def no_barrier(a, out):
    s = cuda.shared.array(8, float32)
    t = cuda.threadIdx.x
    s[t] = a[t]
    out[t] = s[(t + 1) % 8]


def run(kernel, n=20, grid=3):
    a = np.arange(n, dtype=np.float32)
    return simulate(kernel, grid, 8, [("a", a), ("out", np.zeros(n, np.float32))])


def accesses(picture):
    """The accesses as (thread, interval, "r"/"w", array name, flat element) tuples."""
    cols = picture["accesses"]
    names = [a["name"] for a in picture["arrays"]]
    return {(t, i, "w" if w else "r", names[k], e) for t, i, w, k, e in
            zip(cols["thread"], cols["interval"], cols["write"], cols["array"], cols["element"],
                strict=True)}


def test_a_clean_run_keeps_its_last_block_with_every_access_and_barrier():
    picture = run(neighbours).observed
    assert picture["block"] == [2, 0, 0] and picture["block_dims"] == [8, 1, 1]
    assert picture["fault"] is None and picture["race"] is None and not picture["truncated"]
    assert [a["name"] for a in picture["arrays"]] == ["a", "out", "s"]
    assert picture["arrays"][2] == {"name": "s", "space": "shared", "shape": [8]}
    assert len(picture["barriers"]) == 1 and "cuda.syncthreads()" in picture["barriers"][0]
    seen = accesses(picture)
    for t in range(4):                      # elements 16..19: threads 0..3 of block 2
        assert (t, 0, "r", "a", 16 + t) in seen and (t, 0, "w", "s", t) in seen
        assert (t, 1, "r", "s", (t + 1) % 8) in seen and (t, 1, "w", "out", 16 + t) in seen
    assert not any(name == "a" and t >= 4 for t, _, _, name, _ in seen)
    assert json.loads(json.dumps(picture)) == picture


def test_an_out_of_bounds_access_keeps_the_faulting_block_and_names_the_thread():
    picture = run(unguarded).observed
    assert picture["block"] == [2, 0, 0]
    assert picture["fault"] == {"kind": "out of bounds", "thread": 4, "array": "a", "index": [20],
                                "action": "read", "message": picture["fault"]["message"]}
    assert "thread 4 of block 2 read a[20]" in picture["fault"]["message"]


def test_a_race_keeps_the_first_racing_block_with_both_threads():
    trace = run(no_barrier, n=8, grid=2)
    picture = trace.observed
    assert picture["block"] == [0, 0, 0]
    assert picture["race"] == {"kind": "read-write", "array": "s", "index": [1], "threads": [0, 1],
                               "interval": 0, "space": "shared"}
    assert trace.races[0].reader_id == 0 and trace.races[0].writer_id == 1


def test_a_block_that_never_stops_accessing_is_cut_short(monkeypatch):
    monkeypatch.setattr(observed, "MAX_ACCESSES", 10)
    picture = run(neighbours).observed
    assert picture["truncated"] and len(picture["accesses"]["thread"]) == 10

