"""Racy: one thread raises a flag in global memory that the others read in the same interval."""
import numpy as np
from numba import cuda

LAUNCH = (1, 32, 0)
EXPECT = "read flag[0]"


@cuda.jit
def kernel(flag, out):
    t = cuda.threadIdx.x
    if t == 31:
        flag[0] = 1
    out[t] = flag[0]


def inputs():
    return {"flag": np.zeros(1, np.int32), "out": np.zeros(32, np.int32)}


def reference(args):
    return np.ones(32, np.int32)
