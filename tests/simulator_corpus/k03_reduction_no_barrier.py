"""Racy: a tree reduction in shared memory with no barrier between its steps."""
import numpy as np
from numba import cuda, float32

LAUNCH = (1, 64, 0)
EXPECT = "in the same barrier interval"


@cuda.jit
def kernel(a, out):
    s = cuda.shared.array(64, float32)
    t = cuda.threadIdx.x
    s[t] = a[t]
    cuda.syncthreads()
    stride = 32
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        stride //= 2
    if t == 0:
        out[0] = s[0]


def inputs():
    return {"a": np.arange(64, dtype=np.float32), "out": np.zeros(1, np.float32)}


def reference(args):
    return np.array([args["a"].sum()], np.float32)
