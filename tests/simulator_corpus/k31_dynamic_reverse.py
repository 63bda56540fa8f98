"""Correct: reverse an array through dynamic shared memory (the launch gives 128 bytes)."""
import numpy as np
from numba import cuda, float32

LAUNCH = (1, 32, 128)
EXPECT = None


@cuda.jit
def kernel(a, out):
    s = cuda.shared.array(0, float32)
    t = cuda.threadIdx.x
    s[t] = a[t]
    cuda.syncthreads()
    out[t] = s[s.size - 1 - t]


def inputs():
    return {"a": np.arange(32, dtype=np.float32), "out": np.zeros(32, np.float32)}


def reference(args):
    return args["a"][::-1].copy()
