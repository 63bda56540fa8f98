"""Correct: k01 with the barrier between the writes and the reads."""
import numpy as np
from numba import cuda, float32

LAUNCH = (1, 32, 0)
EXPECT = None


@cuda.jit
def kernel(a, out):
    s = cuda.shared.array(32, float32)
    t = cuda.threadIdx.x
    s[t] = a[t]
    cuda.syncthreads()
    out[t] = s[(t + 1) % 32]


def inputs():
    return {"a": np.arange(32, dtype=np.float32), "out": np.zeros(32, np.float32)}


def reference(args):
    return np.roll(args["a"], -1)
