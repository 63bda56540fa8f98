"""Wrong: the last shared element is read but no thread writes it."""
import numpy as np
from numba import cuda, float32

LAUNCH = (1, 31, 0)
EXPECT = "nobody wrote"


@cuda.jit
def kernel(a, out):
    s = cuda.shared.array(32, float32)
    t = cuda.threadIdx.x
    s[t] = a[t]
    cuda.syncthreads()
    out[t] = s[t + 1]


def inputs():
    return {"a": np.arange(32, dtype=np.float32), "out": np.zeros(31, np.float32)}


def reference(args):
    return args["a"][1:32].copy()
