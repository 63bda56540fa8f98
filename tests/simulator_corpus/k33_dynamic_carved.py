"""Correct: one dynamic shared buffer carved into two arrays by slicing it."""
import numpy as np
from numba import cuda, float32

LAUNCH = (1, 32, 256)
EXPECT = None


@cuda.jit
def kernel(x, out):
    dyn = cuda.shared.array(0, float32)
    a = dyn[0:32]
    b = dyn[32:]
    t = cuda.threadIdx.x
    a[t] = x[t]
    cuda.syncthreads()
    b[(t + 1) % 32] = 2 * a[t]
    cuda.syncthreads()
    out[t] = b[t] + b.size


def inputs():
    return {"x": np.arange(32, dtype=np.float32), "out": np.zeros(32, np.float32)}


def reference(args):
    return 2 * np.roll(args["x"], 1) + 32
