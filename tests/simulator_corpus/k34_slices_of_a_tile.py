"""Correct: each warp works on its own row of a 2-D shared tile through a slice."""
import numpy as np
from numba import cuda, float32

LAUNCH = (1, 64, 0)
EXPECT = None


@cuda.jit
def kernel(a, out):
    tile = cuda.shared.array((2, 32), float32)
    t = cuda.threadIdx.x
    row = tile[t // 32, :]
    row[t % 32] = a[t]
    cuda.syncthreads()
    mine = out[t // 32 * 32:]
    mine[t % 32] = row[31 - t % 32] + row.shape[0]


def inputs():
    return {"a": np.arange(64, dtype=np.float32), "out": np.zeros(64, np.float32)}


def reference(args):
    return args["a"].reshape(2, 32)[:, ::-1].reshape(-1) + 32
