"""Wrong: the upper half of the warp returns early, and the lower half shuffles from it."""
import numpy as np
from numba import cuda

LAUNCH = (1, 32, 0)
EXPECT = "has exited"


@cuda.jit
def kernel(a, out):
    t = cuda.threadIdx.x
    if t >= 16:
        return
    out[t] = cuda.shfl_down_sync(0xFFFFFFFF, a[t], 16)


def inputs():
    return {"a": np.arange(32, dtype=np.int32), "out": np.zeros(32, np.int32)}


def reference(args):
    return np.concatenate([args["a"][16:], np.zeros(16, np.int32)])
