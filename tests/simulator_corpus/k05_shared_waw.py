"""Racy: every thread writes its own value into one shared slot, and all read it back."""
import numpy as np
from numba import cuda, int32

LAUNCH = (1, 32, 0)
EXPECT = "both wrote last[0] with different values"


@cuda.jit
def kernel(out):
    last = cuda.shared.array(1, int32)
    t = cuda.threadIdx.x
    last[0] = t
    cuda.syncthreads()
    out[t] = last[0]


def inputs():
    return {"out": np.zeros(32, np.int32)}


def reference(args):
    return np.full(32, 31, np.int32)        # what the writer meant: the last thread's value
