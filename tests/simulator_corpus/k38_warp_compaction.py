"""Correct: stream compaction inside a warp with activemask, ballot_sync and lanemask_lt."""
import numpy as np
from numba import cuda

LAUNCH = (1, 32, 0)
EXPECT = None


@cuda.jit
def kernel(a, out):
    t = cuda.threadIdx.x
    keep = a[t] % 2 == 1
    mask = cuda.activemask()
    ballot = cuda.ballot_sync(mask, keep)
    if keep:
        out[cuda.popc(ballot & cuda.lanemask_lt())] = a[t]


def inputs():
    return {"a": np.arange(32, dtype=np.int32), "out": np.zeros(32, np.int32)}


def reference(args):
    odd = args["a"][args["a"] % 2 == 1]
    return np.concatenate([odd, np.zeros(32 - odd.size, np.int32)])
