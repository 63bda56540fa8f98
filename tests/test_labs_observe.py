"""observe(): a kernel's picture as plain data, run here on the simulator or, on a GPU backend,
in a fresh process on the simulator (gemmlab/labs/observe.py)."""
import numpy as np
import pytest

import gemmlab as gl

if gl.device.backend() != "sim":
    pytest.skip("compares the run here with the fresh process's", allow_module_level=True)
from gemmlab.judging import load_function  # noqa: E402
from gemmlab.labs import observe  # noqa: E402

SHIFT = '''@cuda.jit
def shift(a, out):
    s = cuda.shared.array(8, float32)
    t = cuda.threadIdx.x
    s[t] = a[t]
    out[t] = s[(t + 1) % 8]
'''


def test_observe_runs_here_on_the_simulator_and_in_a_fresh_process_on_a_gpu(monkeypatch):
    kernel = load_function(SHIFT, "shift", "<cell 7>")
    a = np.arange(8, dtype=np.float32)
    args = [("a", a), ("out", np.zeros(8, np.float32))]
    here = observe.observe(kernel, 1, 8, args)
    assert here["race"]["threads"] == [0, 1] and not args[1][1].any()     # arrays untouched
    monkeypatch.setattr(observe.device, "backend", lambda: "gpu")         # as in a GPU notebook
    there = observe.observe(kernel, 1, 8, args)
    assert there == here
