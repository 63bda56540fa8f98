"""Wrong: a barrier inside an `if` that only half the block takes."""
import numpy as np
from numba import cuda, float32

LAUNCH = (1, 32, 0)
EXPECT = "finished without reaching the syncthreads"


@cuda.jit
def kernel(a, out):
    s = cuda.shared.array(32, float32)
    t = cuda.threadIdx.x
    s[t] = a[t]
    if t < 16:
        cuda.syncthreads()
        out[t] = s[t + 16]


def inputs():
    return {"a": np.arange(32, dtype=np.float32), "out": np.zeros(32, np.float32)}


def reference(args):
    return np.concatenate([args["a"][16:], np.zeros(16, np.float32)])
