"""Lesson 01 on the device: each CUDA thread sums a prefix of the input into an FP16 or an FP32
accumulator, so the "4096 ones give 2048" effect is seen in a real kernel (and on the simulator,
which runs the same code).

Thread t adds ``values[0], values[1], ..., values[lengths[t] - 1]`` one at a time, left to right,
into ``out[t]``. The accumulator *is* the output element: ``out`` has dtype float16 or float32,
so every ``out[t] += values[k]`` rounds the sum to that format (on the GPU an FP16 or FP32 add;
on the simulator NumPy scalar arithmetic of the same dtype). Accumulating into the array element
rather than a local variable is deliberate: the simulator cannot cast a local to float16
(``numba.float16(0)``), while an array element has its dtype on both backends.

The result for thread t equals ``gemmlab.precision.accumulate(values[:lengths[t]], acc)`` with
the inputs stored in ``inputs`` format first; the tests check exactly that.
"""
import warnings

import numpy as np

from .. import device
from ..precision import get_format, round_to

DEVICE_ACCUMULATORS = {"fp16": np.float16, "fp32": np.float32}
DEVICE_INPUTS = {"fp16": np.float16, "fp32": np.float32}
BLOCK = 64

# A module global, not a local of the factory: the simulator swaps the numba.cuda module for its
# fake one only in a kernel's globals. device.cuda() fixes the backend before the import.
cuda = device.cuda()
_kernel = None


def _prefix_sum_kernel():
    """The kernel, compiled on first use (after the backend is fixed)."""
    global _kernel
    if _kernel is None:
        @cuda.jit
        def prefix_sums(values, lengths, out):
            t = cuda.grid(1)
            if t < out.size:
                for k in range(lengths[t]):
                    out[t] += values[k]      # rounded to out's dtype after every addition

        _kernel = prefix_sums
    return _kernel


def _check_name(name, allowed, what):
    get_format(name)                                  # unknown names: the usual ValueError
    if name not in allowed:
        raise ValueError(f"the device kernel supports {what} {', '.join(allowed)}, got {name!r}")
    return allowed[name]


def prefix_lengths(n, threads):
    """``threads`` prefix lengths spread evenly up to ``n``: n/threads, 2n/threads, ..., n."""
    if int(n) != n or int(threads) != threads or n < 1 or threads < 1:
        raise ValueError(f"n and threads must be positive whole numbers, got n={n!r}, "
                         f"threads={threads!r}")
    t = np.arange(1, int(threads) + 1, dtype=np.int64)
    return np.maximum(t * int(n) // int(threads), 1)


def device_prefix_sums(values, lengths, acc="fp16", inputs="fp16"):
    """Run the kernel: thread t sums ``values[:lengths[t]]`` sequentially in ``acc`` ("fp16" or
    "fp32"), the values stored in ``inputs`` format ("fp16" or "fp32"). Returns float64 sums."""
    acc_t = _check_name(acc, DEVICE_ACCUMULATORS, "accumulators")
    in_t = _check_name(inputs, DEVICE_INPUTS, "input formats")
    x = np.atleast_1d(round_to(values, inputs)).ravel()
    lengths = np.asarray(lengths, dtype=np.int64).ravel()
    if lengths.size == 0:
        raise ValueError("lengths is empty: give one prefix length per thread")
    if lengths.min() < 0 or lengths.max() > x.size:
        raise ValueError(f"each length must lie in 0..{x.size} (the number of values), got "
                         f"lengths from {lengths.min()} to {lengths.max()}")
    d_values = cuda.to_device(np.asarray(x, dtype=in_t))
    d_lengths = cuda.to_device(lengths.astype(np.int32))
    d_out = cuda.to_device(np.zeros(lengths.size, dtype=acc_t))
    blocks = (lengths.size + BLOCK - 1) // BLOCK
    with warnings.catch_warnings():
        # A few hundred threads cannot fill a GPU, and need not: this kernel shows rounding,
        # not speed. Silence Numba's low-occupancy warning for this launch only.
        warnings.filterwarnings("ignore", message=".*under-utilization.*")
        _prefix_sum_kernel()[blocks, min(BLOCK, lengths.size)](d_values, d_lengths, d_out)
    return d_out.copy_to_host().astype(np.float64)


def ones_experiment(acc="fp16", n=None, threads=None):
    """The lesson's experiment: thread t sums the first lengths[t] of n ones in ``acc``.

    Sizes default to ``gemmlab.device.sizes()`` ("accumulate_n", "accumulate_threads").
    Returns (lengths, sums), both arrays.
    """
    sizes = device.sizes()
    n = sizes["accumulate_n"] if n is None else n
    threads = sizes["accumulate_threads"] if threads is None else threads
    lengths = prefix_lengths(n, threads)
    return lengths, device_prefix_sums(np.ones(int(n)), lengths, acc=acc, inputs="fp16")
