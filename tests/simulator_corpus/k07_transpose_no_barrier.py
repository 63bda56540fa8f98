"""Racy: a tile transpose through shared memory without the barrier."""
import numpy as np
from numba import cuda, float32

LAUNCH = (1, (8, 8), 0)
EXPECT = "read tile["


@cuda.jit
def kernel(a, out):
    tile = cuda.shared.array((8, 8), float32)
    x, y = cuda.threadIdx.x, cuda.threadIdx.y
    tile[y, x] = a[y, x]
    out[y, x] = tile[x, y]


def inputs():
    return {"a": np.arange(64, dtype=np.float32).reshape(8, 8),
            "out": np.zeros((8, 8), np.float32)}


def reference(args):
    return args["a"].T.copy()
