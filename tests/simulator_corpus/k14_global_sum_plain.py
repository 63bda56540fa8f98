"""Racy: every thread of a block adds into one global element with a plain read and write."""
import numpy as np
from numba import cuda

LAUNCH = (1, 32, 0)
EXPECT = "read out[0]"


@cuda.jit
def kernel(a, out):
    t = cuda.threadIdx.x
    out[0] = out[0] + a[t]


def inputs():
    return {"a": np.ones(32, np.float32), "out": np.zeros(1, np.float32)}


def reference(args):
    return np.array([32], np.float32)
