"""Racy: thread 0 resets a global counter while the other threads add to it atomically, in the
same interval."""
import numpy as np
from numba import cuda

LAUNCH = (1, 32, 0)
EXPECT = "cuda.atomic"


@cuda.jit
def kernel(out):
    t = cuda.threadIdx.x
    if t == 0:
        out[0] = 0
    else:
        cuda.atomic.add(out, 0, 1)


def inputs():
    return {"out": np.full(1, 5, np.int32)}


def reference(args):
    return np.array([31], np.int32)
