"""Megatron's tensor-parallel FFN: column-parallel up projection, the activation on each rank's
shard, row-parallel down projection, one sum at the exit (Shoeybi et al. 2019, "Megatron-LM").

The up projection's output shard Z_r (M x F/p) is exactly the input block the row-parallel down
projection needs, and GELU works element by element, so nothing is gathered in the middle. The
down projection's bias is added once, after the sum. The gated variant (SwiGLU) splits the gate
and up projections over the same hidden features, so the elementwise product stays local.
"""
import math

import numpy as np

from .comm import CommLog, ParallelResult, check_bias, check_reduction, reduce_partials
from .comm import allgather_columns
from .sharding import check_inner, check_matrix, check_ranks, require_divisible, split_columns
from .sharding import split_rows

_HIDDEN = ("F", "Megatron's FFN gives each rank F/p of the F hidden features (W_up's columns, "
                "W_down's rows)")


def _as_float(x):
    if not hasattr(x, "dtype"):      # keep arrays as they are: CuPy refuses np.asarray
        x = np.asarray(x)
    return x if x.dtype.kind == "f" else x.astype(np.float64)


def gelu(x):
    """GELU, tanh approximation (as in GPT-2): 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    x = _as_float(x)
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))


def gelu_grad(x):
    """Derivative of :func:`gelu` (the same tanh approximation), for the backward pass."""
    x = _as_float(x)
    c = math.sqrt(2.0 / math.pi)
    t = np.tanh(c * (x + 0.044715 * x**3))
    return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * c * (1.0 + 3 * 0.044715 * x * x)


def silu(x):
    """SiLU (swish): x * sigmoid(x), written with tanh so large |x| does not overflow."""
    x = _as_float(x)
    return x * 0.5 * (1.0 + np.tanh(0.5 * x))


def _f64(*arrays):
    return [None if a is None else np.asarray(a, dtype=np.float64) for a in arrays]


def ffn_reference(X, W_up, W_down, b_up=None, b_down=None):
    """The unsharded FFN ``GELU(X W_up + b_up) W_down + b_down``, computed in float64."""
    X, W_up, W_down, b_up, b_down = _f64(X, W_up, W_down, b_up, b_down)
    Z = X @ W_up + (0 if b_up is None else b_up)
    return gelu(Z) @ W_down + (0 if b_down is None else b_down)


def swiglu_reference(X, W_gate, W_up, W_down, b_down=None):
    """The unsharded gated FFN ``(SiLU(X W_gate) * (X W_up)) W_down + b_down``, in float64."""
    X, W_gate, W_up, W_down, b_down = _f64(X, W_gate, W_up, W_down, b_down)
    return (silu(X @ W_gate) * (X @ W_up)) @ W_down + (0 if b_down is None else b_down)


def _check_ffn(X, W_ins, W_down, p):
    X, W_down = check_matrix("X", X), check_matrix("W_down", W_down)
    checked = {}
    for name, W in W_ins.items():
        W = check_matrix(name, W)
        check_inner(X, W, "X", name)
        check_inner(W, W_down, name, "W_down")
        checked[name] = W
    p = check_ranks(p)
    require_divisible(W_down.shape[0], p, *_HIDDEN)
    return X, checked, W_down, p


def rank_ffn(X, W_up_r, W_down_r, b_up_r=None):
    """One rank's local work: Z_r = X W_up,r (+ b_up,r), H_r = GELU(Z_r) and its partial sum
    P_r = H_r W_down,r. No communication."""
    Z = X @ W_up_r if b_up_r is None else X @ W_up_r + b_up_r
    H = gelu(Z)
    return Z, H, H @ W_down_r


def megatron_ffn_variant(X, W_up, W_down, p, b_down=None, b_up=None, reduce="all-reduce",
                         bias_before_sum=False, gather_middle=False):
    """:func:`megatron_ffn` with the switches ``mistakes.py`` turns on: ``bias_before_sum`` adds
    ``b_down`` on every rank before the sum, ``gather_middle`` all-gathers Z before GELU."""
    X, ins, W_down, p = _check_ffn(X, {"W_up": W_up}, W_down, p)
    W_up = ins["W_up"]
    b_up = check_bias("b_up", b_up, W_up.shape[1])
    b_down = check_bias("b_down", b_down, W_down.shape[1])
    check_reduction(reduce)
    log = CommLog()
    W_up_r = split_columns(W_up, p, *_HIDDEN)
    b_up_r = [None] * p if b_up is None else split_columns(b_up, p, *_HIDDEN)
    W_down_r = split_rows(W_down, p, *_HIDDEN)
    if gather_middle:
        Z = [X @ W if b is None else X @ W + b for W, b in zip(W_up_r, b_up_r, strict=True)]
        Z_full = allgather_columns(Z, "after the up projection (not needed)", log)
        H = [np.split(gelu(Zf), p, axis=1)[r] for r, Zf in enumerate(Z_full)]
        P = [H_r @ W for H_r, W in zip(H, W_down_r, strict=True)]
    else:
        Z, H, P = zip(*(rank_ffn(X, W_u, W_d, b)
                        for W_u, W_d, b in zip(W_up_r, W_down_r, b_up_r, strict=True)), strict=True)
        Z, H, P = list(Z), list(H), list(P)
    outputs = reduce_partials(P, b_down, reduce, "after the down projection", log,
                              bias_before_sum)
    local = {"W_up": W_up_r, "Z": Z, "H": H, "W_down": W_down_r, "P": P}
    return ParallelResult(outputs, log, local)


def megatron_ffn(X, W_up, W_down, p, b_down=None, b_up=None, reduce="all-reduce"):
    """The FFN ``GELU(X W_up + b_up) W_down + b_down`` on p simulated ranks, Megatron style.

    X: M x D; W_up: D x F (column-split, rank r gets D x F/p); W_down: F x N (row-split, F/p x N).
    ``reduce='all-reduce'`` leaves every rank with Y (M x N); ``'reduce-scatter'`` leaves rank r
    with rows r*M/p ... of Y (sequence parallelism). ``.local`` holds each rank's W_up, Z, H,
    W_down and P (its partial sum); ``.comm`` lists the one collective at the exit.
    """
    return megatron_ffn_variant(X, W_up, W_down, p, b_down=b_down, b_up=b_up, reduce=reduce)


def megatron_swiglu_ffn(X, W_gate, W_up, W_down, p, b_down=None, reduce="all-reduce"):
    """The gated FFN ``(SiLU(X W_gate) * (X W_up)) W_down + b_down`` on p simulated ranks.

    W_gate and W_up (D x F each) are split over the same hidden-feature columns, so rank r holds
    gate feature j exactly when it holds up feature j and forms their product locally; W_down is
    row-split as in :func:`megatron_ffn`, with one sum at the exit.
    """
    X, ins, W_down, p = _check_ffn(X, {"W_gate": W_gate, "W_up": W_up}, W_down, p)
    b_down = check_bias("b_down", b_down, W_down.shape[1])
    check_reduction(reduce)
    log = CommLog()
    W_gate_r = split_columns(ins["W_gate"], p, *_HIDDEN)
    W_up_r = split_columns(ins["W_up"], p, *_HIDDEN)
    W_down_r = split_rows(W_down, p, *_HIDDEN)
    G = [X @ W for W in W_gate_r]
    U = [X @ W for W in W_up_r]
    H = [silu(g) * u for g, u in zip(G, U, strict=True)]
    P = [H_r @ W for H_r, W in zip(H, W_down_r, strict=True)]
    outputs = reduce_partials(P, b_down, reduce, "after the down projection", log)
    local = {"W_gate": W_gate_r, "W_up": W_up_r, "G": G, "U": U, "H": H, "W_down": W_down_r,
             "P": P}
    return ParallelResult(outputs, log, local)


def ffn_backward_reference(X, W_up, W_down, dY):
    """Gradients (dX, dW_up, dW_down) of the unsharded FFN ``GELU(X W_up) W_down`` for the
    upstream gradient dY, computed in float64."""
    X, W_up, W_down, dY = _f64(X, W_up, W_down, dY)
    Z = X @ W_up
    dZ = (dY @ W_down.T) * gelu_grad(Z)
    return dZ @ W_up.T, X.T @ dZ, gelu(Z).T @ dY


def megatron_ffn_backward(X, W_up, W_down, dY, p):
    """The backward pass of :func:`megatron_ffn` (no biases) on p simulated ranks.

    dY (M x N) arrives whole on every rank. Each rank's weight gradients need only its own
    shards: dW_down_r = H_r^T dY and dW_up_r = X^T dZ_r, no communication. The gradient of X
    is a sum over the ranks' hidden features, dX = sum_r dZ_r W_up_r^T: one all-reduce, at the
    FFN's entrance, mirroring the forward's one at its exit. ``.outputs`` holds each rank's dX;
    ``.local`` its dZ, dW_up and dW_down.
    """
    forward = megatron_ffn_variant(X, W_up, W_down, p)
    dY = check_matrix("dY", dY)
    N = forward.local["W_down"][0].shape[1]
    if dY.shape != (X.shape[0], N):
        raise ValueError(f"dY is the gradient of Y, so it must have Y's shape "
                         f"{(X.shape[0], N)}, got {dY.shape}")
    dZ = [(dY @ W_d.T) * gelu_grad(Z_r)
          for W_d, Z_r in zip(forward.local["W_down"], forward.local["Z"], strict=True)]
    log = CommLog()
    dX_partials = [dZ_r @ W_u.T for dZ_r, W_u in zip(dZ, forward.local["W_up"], strict=True)]
    dX = reduce_partials(dX_partials, None, "all-reduce", "backward of the up projection (dX)",
                         log)
    local = {"dZ": dZ, "dW_up": [np.asarray(X).T @ dZ_r for dZ_r in dZ],
             "dW_down": [H_r.T @ dY for H_r in forward.local["H"]]}
    return ParallelResult(dX, log, local)
