"""Correct: a warp-synchronous reduction in shared memory with syncwarp between the steps."""
import numpy as np
from numba import cuda, float32

LAUNCH = (1, 32, 0)
EXPECT = None


@cuda.jit
def kernel(a, out):
    s = cuda.shared.array(32, float32)
    t = cuda.threadIdx.x
    s[t] = a[t]
    cuda.syncwarp()
    stride = 16
    while stride > 0:
        v = s[t]
        if t < stride:
            v += s[t + stride]
        cuda.syncwarp()
        s[t] = v
        cuda.syncwarp()
        stride //= 2
    if t == 0:
        out[0] = s[0]


def inputs():
    return {"a": np.arange(32, dtype=np.float32), "out": np.zeros(1, np.float32)}


def reference(args):
    return np.array([args["a"].sum()], np.float32)
