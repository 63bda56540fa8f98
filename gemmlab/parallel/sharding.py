"""Column- and row-parallel linear layers on simulated ranks, and the weight-layout helpers.

Everything is named after the *math* weight of ``Y = X W`` with ``X`` of shape M x K and ``W`` of
shape K x N: column parallel splits W's output columns N (each rank gets K x N/p and keeps the
whole X), row parallel splits W's contraction rows K (each rank gets K/p x N and must get the
matching K/p columns of X). Frameworks such as PyTorch store ``W.T`` (out x in), which flips what
"rows" and "columns" look like in memory: :func:`math_weight` and :func:`parallel_kind` undo that.
"""
import numpy as np

from ..numeric_args import whole_number

LAYOUTS = ("in_out", "out_in")


def check_ranks(p):
    """``p`` as an int, or a clear error: the number of ranks must be a whole number >= 1."""
    return whole_number("p (the number of ranks)", p)


def check_matrix(name, A):
    """``A`` as a 2-D real numeric NumPy array, or a TypeError/ValueError naming ``name``."""
    arr = np.asarray(A)
    if arr.dtype == object or arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must hold real numbers (an integer or float array), "
                        f"got dtype {arr.dtype}")
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a matrix (2-D), got an array of shape {arr.shape}")
    return arr


def check_inner(X, W, x_name="X", w_name="W"):
    """Raise unless ``X @ W`` is defined: X's columns must equal W's rows (the contraction K)."""
    if X.shape[1] != W.shape[0]:
        raise ValueError(
            f"{x_name} @ {w_name} needs {x_name}'s columns to equal {w_name}'s rows (the "
            f"contraction dimension K): {x_name} is {X.shape[0]}x{X.shape[1]}, {w_name} is "
            f"{W.shape[0]}x{W.shape[1]}. If {w_name} is stored out x in (PyTorch), pass "
            f"math_weight({w_name}, 'out_in').")


def require_divisible(size, p, symbol, context):
    """Raise a ValueError saying that ``symbol`` (= ``size``) must be divisible by ``p``;
    ``context`` says why, e.g. "column parallel gives each rank N/p of W's output columns"."""
    if size % p:
        fits = [d for d in range(1, size + 1) if size % d == 0]
        shown = ", ".join(map(str, fits[:12])) + (", ..." if len(fits) > 12 else "")
        raise ValueError(f"{context}: {symbol} = {size} must be divisible by p = {p} "
                         f"({size} % {p} = {size % p}); p could be one of {shown}")


COLUMN_SPLIT = ("N", "column parallel gives each rank N/p of W's N output columns")
ROW_SPLIT = ("K", "row parallel gives each rank K/p of W's K input rows (the contraction)")


def split_columns(W, p, symbol=COLUMN_SPLIT[0], context=COLUMN_SPLIT[1]):
    """W (K x N) cut into p column blocks W_r of shape K x N/p, in rank order (a 1-D bias is cut
    the same way)."""
    W, p = np.asarray(W), check_ranks(p)
    require_divisible(W.shape[-1], p, symbol, context)
    return np.split(W, p, axis=-1)


def split_rows(W, p, symbol=ROW_SPLIT[0], context=ROW_SPLIT[1]):
    """W (K x N) cut into p row blocks W_r of shape K/p x N, in rank order."""
    W, p = np.asarray(W), check_ranks(p)
    require_divisible(W.shape[0], p, symbol, context)
    return np.split(W, p, axis=0)


def column_parallel(X, W, p):
    """Each rank's output shard ``Y_r = X W_r`` (M x N/p): the whole X times a block of W's
    columns. The shards are different output columns of Y; their merge is a concatenation."""
    X, W = check_matrix("X", X), check_matrix("W", W)
    check_inner(X, W)
    return [X @ W_r for W_r in split_columns(W, p)]


def row_parallel(X, W, p):
    """Each rank's partial sum ``P_r = X_r W_r`` (M x N): a block of K/p columns of X times the
    matching K/p rows of W. Every P_r has Y's full shape; their merge is a sum (all-reduce)."""
    X, W = check_matrix("X", X), check_matrix("W", W)
    check_inner(X, W)
    W_parts = split_rows(W, p)
    X_parts = np.split(X, len(W_parts), axis=1)
    return [X_r @ W_r for X_r, W_r in zip(X_parts, W_parts, strict=True)]


def _check_layout(layout):
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be 'in_out' (the math W, K x N, as in Y = X W) or "
                         f"'out_in' (PyTorch's nn.Linear.weight, N x K, as in Y = X W^T), "
                         f"got {layout!r}")


def math_weight(W_stored, layout):
    """The math W (in x out, K x N) of a weight stored in ``layout``: 'in_out' is already the math
    W; 'out_in' (PyTorch) is its transpose, so the math W is ``W_stored.T``."""
    _check_layout(layout)
    W_stored = check_matrix("W_stored", W_stored)
    return W_stored if layout == "in_out" else W_stored.T


def parallel_kind(layout, split_axis):
    """Which tensor-parallel split cutting the *stored* weight along ``split_axis`` is.

    Cutting axis 0 of an out x in weight (its visible rows) cuts the output features: that is
    column parallel, although it looks like a row split in memory.
    """
    _check_layout(layout)
    if split_axis not in (0, 1):
        raise ValueError(f"split_axis is the stored weight's axis that is cut: 0 or 1, "
                         f"got {split_axis!r}")
    output_axis = 1 if layout == "in_out" else 0
    return "column" if split_axis == output_axis else "row"
