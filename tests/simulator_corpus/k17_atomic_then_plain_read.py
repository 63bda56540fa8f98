"""Racy: every thread adds 1 to a shared counter with an atomic and thread 0 reads it with no
barrier (1 or 32, depending on the order)."""
import numpy as np
from numba import cuda, int32

LAUNCH = (1, 32, 0)
EXPECT = "cuda.atomic"


@cuda.jit
def kernel(out):
    count = cuda.shared.array(1, int32)
    t = cuda.threadIdx.x
    if t == 0:
        count[0] = 0
    cuda.syncthreads()
    cuda.atomic.add(count, 0, 1)
    if t == 0:
        out[0] = count[0]


def inputs():
    return {"out": np.zeros(1, np.int32)}


def reference(args):
    return np.array([32], np.int32)
