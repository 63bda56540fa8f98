"""Correct: a guarded element-wise kernel on a grid larger than the array."""
import numpy as np
from numba import cuda

LAUNCH = (2, 32, 0)
EXPECT = None


@cuda.jit
def kernel(a, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = 2 * a[i]


def inputs():
    return {"a": np.arange(40, dtype=np.float32), "out": np.zeros(40, np.float32)}


def reference(args):
    return 2 * args["a"]
