"""Wrong: a block of 16 threads shuffles down by 8 with a full mask, so lanes 8-15 read lanes
16-23, which the block does not have."""
import numpy as np
from numba import cuda

LAUNCH = (1, 16, 0)
EXPECT = "lane 16 does not exist"


@cuda.jit
def kernel(a, out):
    t = cuda.threadIdx.x
    out[t] = cuda.shfl_down_sync(0xFFFFFFFF, a[t], 8) + a[t]


def inputs():
    return {"a": np.arange(16, dtype=np.int32), "out": np.zeros(16, np.int32)}


def reference(args):
    a = args["a"]
    return np.concatenate([a[8:] + a[:8], 2 * a[8:]]).astype(np.int32)
