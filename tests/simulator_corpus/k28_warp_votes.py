"""Correct: ballot_sync, any_sync and all_sync over a predicate, with popc of the ballot."""
import numpy as np
from numba import cuda

LAUNCH = (1, 32, 0)
EXPECT = None


@cuda.jit
def kernel(a, out):
    t = cuda.threadIdx.x
    big = a[t] > 20
    ballot = cuda.ballot_sync(0xFFFFFFFF, big)
    some = cuda.any_sync(0xFFFFFFFF, big)
    every = cuda.all_sync(0xFFFFFFFF, big)
    out[t] = cuda.popc(ballot) * 100 + some * 10 + every


def inputs():
    return {"a": np.arange(32, dtype=np.int32), "out": np.zeros(32, np.int32)}


def reference(args):
    return np.full(32, 11 * 100 + 10, np.int32)
