"""Wrong: a block of 16 threads calls syncwarp with a mask that names all 32 lanes."""
import numpy as np
from numba import cuda, int32

LAUNCH = (1, 16, 0)
EXPECT = "the block has no such thread"


@cuda.jit
def kernel(out):
    s = cuda.shared.array(16, int32)
    t = cuda.threadIdx.x
    s[t] = t
    cuda.syncwarp(0xFFFFFFFF)
    out[t] = s[15 - t]


def inputs():
    return {"out": np.zeros(16, np.int32)}


def reference(args):
    return np.arange(16, dtype=np.int32)[::-1].copy()
