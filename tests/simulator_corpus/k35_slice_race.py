"""Racy: a slice of shared memory written by one half of the block and read by the other half,
with no barrier."""
import numpy as np
from numba import cuda, float32

LAUNCH = (1, 32, 0)
EXPECT = "read s["


@cuda.jit
def kernel(a, out):
    s = cuda.shared.array(32, float32)
    t = cuda.threadIdx.x
    top = s[16:]
    if t < 16:
        top[t] = a[t]
    else:
        out[t] = s[t]


def inputs():
    return {"a": np.arange(32, dtype=np.float32), "out": np.zeros(32, np.float32)}


def reference(args):
    return np.concatenate([np.zeros(16, np.float32), args["a"][:16]])
