"""Racy: two dynamic shared arrays meant as separate buffers; they share their bytes, so one
thread's write into `b` lands where another thread reads `a`."""
import numpy as np
from numba import cuda, float32

LAUNCH = (1, 32, 128)
EXPECT = "share bytes"


@cuda.jit
def kernel(x, out):
    a = cuda.shared.array(0, float32)
    b = cuda.shared.array(0, float32)
    t = cuda.threadIdx.x
    a[t] = x[t]
    cuda.syncthreads()
    b[(t + 1) % 32] = 2 * a[t]
    cuda.syncthreads()
    out[t] = b[t]


def inputs():
    return {"x": np.arange(32, dtype=np.float32), "out": np.zeros(32, np.float32)}


def reference(args):
    return 2 * np.roll(args["x"], 1)
