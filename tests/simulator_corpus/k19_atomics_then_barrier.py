"""Correct: atomics into a shared counter, a barrier, then thread 0 reads the counter."""
import numpy as np
from numba import cuda, int32

LAUNCH = (1, 32, 0)
EXPECT = None


@cuda.jit
def kernel(a, out):
    count = cuda.shared.array(1, int32)
    t = cuda.threadIdx.x
    if t == 0:
        count[0] = 0
    cuda.syncthreads()
    if a[t] > 10:
        cuda.atomic.add(count, 0, 1)
    cuda.syncthreads()
    if t == 0:
        out[0] = count[0]


def inputs():
    return {"a": np.arange(32, dtype=np.int32), "out": np.zeros(1, np.int32)}


def reference(args):
    return np.array([(args["a"] > 10).sum()], np.int32)
