"""Correct: every thread writes the same value into one shared flag (a benign write)."""
import numpy as np
from numba import cuda, int32

LAUNCH = (1, 32, 0)
EXPECT = None


@cuda.jit
def kernel(out):
    flag = cuda.shared.array(1, int32)
    t = cuda.threadIdx.x
    flag[0] = 7
    cuda.syncthreads()
    out[t] = flag[0] + t


def inputs():
    return {"out": np.zeros(32, np.int32)}


def reference(args):
    return np.arange(32, dtype=np.int32) + 7
