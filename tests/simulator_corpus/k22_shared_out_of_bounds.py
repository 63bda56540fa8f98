"""Wrong: a shared halo one element too small."""
import numpy as np
from numba import cuda, float32

LAUNCH = (1, 32, 0)
EXPECT = "outside the 32 shared array s"


@cuda.jit
def kernel(a, out):
    s = cuda.shared.array(32, float32)
    t = cuda.threadIdx.x
    s[t + 1] = a[t]
    cuda.syncthreads()
    out[t] = s[t + 1]


def inputs():
    return {"a": np.arange(32, dtype=np.float32), "out": np.zeros(32, np.float32)}


def reference(args):
    return args["a"].copy()
