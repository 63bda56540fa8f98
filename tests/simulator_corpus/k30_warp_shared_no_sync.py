"""Racy: the same warp reduction without syncwarp (pre-Volta "warp-synchronous" code, wrong on
GPUs with independent thread scheduling)."""
import numpy as np
from numba import cuda, float32

LAUNCH = (1, 32, 0)
EXPECT = "in the same barrier interval"


@cuda.jit
def kernel(a, out):
    s = cuda.shared.array(32, float32)
    t = cuda.threadIdx.x
    s[t] = a[t]
    cuda.syncthreads()
    stride = 16
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        stride //= 2
    if t == 0:
        out[0] = s[0]


def inputs():
    return {"a": np.arange(32, dtype=np.float32), "out": np.zeros(1, np.float32)}


def reference(args):
    return np.array([args["a"].sum()], np.float32)
