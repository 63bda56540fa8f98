"""Checking the per-rank buffers a collective is given, and splitting them into chunks.

Every simulated collective takes a list with one array per rank. These helpers turn that list into
one stacked array (ranks along axis 0), after checking that it is something a real collective
would accept: at least one rank, numeric data, and the same dtype (and, where needed, the same
shape) on every rank.
"""
import numpy as np


def _is_numeric(dtype):
    if dtype.kind in "iufc":
        return True
    # bfloat16 and the float8 types of ml_dtypes are numeric although NumPy calls them kind "V"
    return dtype.kind == "V" and dtype.type.__module__.startswith("ml_dtypes")


def as_arrays(buffers, what="buffers"):
    """The per-rank inputs as a list of arrays, after checking it is a non-empty list of numbers."""
    if isinstance(buffers, np.ndarray):
        raise TypeError(
            f"{what}: expected a list with one array per rank, got a single array of shape "
            f"{buffers.shape}. If its rows are the ranks' data, pass list(arr).")
    if not isinstance(buffers, (list, tuple)):
        raise TypeError(f"{what}: expected a list with one array per rank, got "
                        f"{type(buffers).__name__}")
    if len(buffers) == 0:
        raise ValueError(f"{what}: got an empty list; a collective needs at least one rank")
    arrays = [np.asarray(b) for b in buffers]
    dtype = arrays[0].dtype
    if not _is_numeric(dtype):
        raise TypeError(f"{what}: rank 0's data has dtype {dtype}; a sum needs numbers "
                        f"(integer, float or complex)")
    for rank, a in enumerate(arrays):
        if a.dtype != dtype:
            raise TypeError(f"{what}: rank {rank}'s data has dtype {a.dtype} but rank 0's has "
                            f"{dtype}; every rank must contribute the same dtype")
    return arrays


def stack_same_shape(buffers, what="buffers"):
    """Stack equal-shaped per-rank arrays into one (ranks, ...) array (a copy)."""
    arrays = as_arrays(buffers, what)
    shape = arrays[0].shape
    for rank, a in enumerate(arrays):
        if a.shape != shape:
            raise ValueError(f"{what}: rank {rank}'s buffer has shape {a.shape} but rank 0's has "
                             f"{shape}; every rank must contribute a buffer of the same shape")
    return np.stack(arrays)


def chunk_bounds(length, n_chunks):
    """Offsets of ``n_chunks`` consecutive chunks covering ``length`` items, as np.array_split
    cuts them: the first ``length % n_chunks`` chunks are one item longer than the rest."""
    base, extra = divmod(length, n_chunks)
    sizes = np.full(n_chunks, base, dtype=np.int64)
    sizes[:extra] += 1
    return np.concatenate([[0], np.cumsum(sizes)])
