"""Wrong: a grid larger than the array and no bounds check."""
import numpy as np
from numba import cuda

LAUNCH = (2, 32, 0)
EXPECT = "outside the 40 array out"


@cuda.jit
def kernel(a, out):
    i = cuda.grid(1)
    out[i] = 2 * a[i % 40]


def inputs():
    return {"a": np.arange(40, dtype=np.float32), "out": np.zeros(40, np.float32)}


def reference(args):
    return 2 * args["a"]
