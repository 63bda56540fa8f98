"""Racy: one shared buffer reloaded every step with a single barrier per step (the next load
overwrites what slower threads still read)."""
import numpy as np
from numba import cuda, float32

LAUNCH = (1, 16, 0)
EXPECT = "in the same barrier interval"


@cuda.jit
def kernel(a, out):
    buf = cuda.shared.array(16, float32)
    t = cuda.threadIdx.x
    acc = float32(0)
    for step in range(4):
        buf[t] = a[step, t]
        cuda.syncthreads()
        acc += buf[(t + 1) % 16]
    out[t] = acc


def inputs():
    return {"a": np.arange(64, dtype=np.float32).reshape(4, 16), "out": np.zeros(16, np.float32)}


def reference(args):
    return np.roll(args["a"], -1, axis=1).sum(0).astype(np.float32)
