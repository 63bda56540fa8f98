"""Correct: syncthreads_count, _and and _or over a predicate."""
import numpy as np
from numba import cuda

LAUNCH = (1, 64, 0)
EXPECT = None


@cuda.jit
def kernel(a, out):
    t = cuda.threadIdx.x
    n = cuda.syncthreads_count(a[t] % 3 == 0)
    every = cuda.syncthreads_and(a[t] >= 0)
    some = cuda.syncthreads_or(a[t] > 62)
    out[t] = n * 100 + every * 10 + some


def inputs():
    return {"a": np.arange(64, dtype=np.int32), "out": np.zeros(64, np.int32)}


def reference(args):
    return np.full(64, 22 * 100 + 10 + 1, np.int32)
