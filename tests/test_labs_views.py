"""Slices and dynamic shared memory in the instrumented simulator (gemmlab/labs/views.py): views
whose accesses are the array's own, dynamic arrays that alias as on the GPU, and the launch's
dynamic size checked."""
import numpy as np
import pytest
from numba import float32, float64, int32

import gemmlab as gl

if gl.device.backend() != "sim":
    pytest.skip("the instrumented simulator runs on the simulator backend", allow_module_level=True)
from gemmlab.labs.simulator import simulate  # noqa: E402

cuda = gl.device.cuda()


@cuda.jit
def backwards_and_strided(out):
    s = cuda.shared.array(8, int32)
    t = cuda.threadIdx.x
    s[t] = t
    cuda.syncthreads()
    odd = s[-1::-2]
    out[t] = odd[t % 4] * 10 + odd.size + s[2:6].shape[0]


def test_slices_follow_numpys_rules_and_count_as_reads_of_the_array():
    out = np.zeros(8, np.int32)
    trace = simulate(backwards_and_strided, 1, 8, [("out", out)])
    assert trace.fault is None and trace.races == []
    assert out.tolist() == [70 + 4 + 4, 50 + 8, 30 + 8, 10 + 8] * 2
    assert trace.shared == {"s": 8}           # the view's reads are s's reads


@cuda.jit
def doubles_over_floats(out):
    wide = cuda.shared.array(0, float64)
    narrow = cuda.shared.array(0, float32)
    t = cuda.threadIdx.x
    if t == 0:
        wide[0] = 1.0
    if t == 1:
        out[0] = narrow[1]                    # the high half of wide[0], no barrier


def test_dynamic_arrays_of_two_types_share_bytes_and_a_race_names_both():
    out = np.zeros(1, np.float32)
    trace = simulate(doubles_over_floats, 1, 2, [("out", out)], shared_bytes=16)
    race = trace.races[0]
    assert (race.array, race.index) == ("narrow", (1,))
    assert "wide[0] and narrow[1] share bytes" in race.describe()
    assert out[0] == np.frombuffer(np.float64(1.0).tobytes(), np.float32)[1]


@pytest.mark.parametrize("nbytes", [-1, 1.5, True, 10**9])
def test_a_bad_dynamic_size_is_refused_with_what_was_given(nbytes):
    with pytest.raises(ValueError, match=f"dynamic shared memory of {nbytes!r}"):
        simulate(doubles_over_floats, 1, 2, [("out", np.zeros(1, np.float32))],
                 shared_bytes=nbytes)
