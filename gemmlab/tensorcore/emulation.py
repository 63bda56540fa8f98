"""The Tensor Core GEMM in NumPy, fragment by fragment, for machines without a GPU.

:func:`emulate` walks the same tiling as the CUDA kernel: blocks over C, shared-memory K tiles
(zero-filled past the edges), warps that each own a grid of 16x16 accumulator fragments, and MMA
steps of 16x16x16 in K order. Each MMA step is ``numerics.mma_update``: exact products of the
FP16/BF16 inputs, accumulated in FP32 (or FP16) one step at a time. Every output element sees
the same sequence of steps as on the GPU, so the result matches the kernel to FP32 rounding.

:func:`emulate_steps` computes the same numbers with all fragments at once (one loop over K
steps), for larger problems; :func:`mma` is one step on one fragment, D = A B + C.
"""
from dataclasses import dataclass

import ml_dtypes
import numpy as np

from .numerics import check_model, mma_update
from .tiling import FRAG, LESSON, get_tiling

_FORMATS = {np.dtype(np.float16): "fp16", np.dtype(ml_dtypes.bfloat16): "bf16"}


def input_format(x, name):
    """"fp16" or "bf16" for a NumPy array of that dtype; a TypeError otherwise."""
    if not isinstance(x, np.ndarray):
        raise TypeError(f"{name} must be a NumPy array, got {type(x).__name__}")
    fmt = _FORMATS.get(x.dtype)
    if fmt is None:
        raise TypeError(f"{name} has dtype {x.dtype}; Tensor Core inputs are FP16 or BF16: convert "
                        f"with {name}.astype(np.float16) (or ml_dtypes.bfloat16)")
    return fmt


def _check_operands(A, B, C, beta):
    fa, fb = input_format(A, "A"), input_format(B, "B")
    if fa != fb:
        raise TypeError(f"A and B must have the same format, got A {A.dtype} and B {B.dtype}")
    if A.ndim != 2 or B.ndim != 2:
        raise ValueError(f"A and B must be 2-D matrices, got shapes {A.shape} and {B.shape}")
    (M, K), (K2, N) = A.shape, B.shape
    if K != K2:
        raise ValueError(f"inner dimensions differ: A is {M} x {K} and B is {K2} x {N}")
    if C is not None and tuple(np.shape(C)) != (M, N):
        raise ValueError(f"C must have the shape of A B, ({M}, {N}), got {tuple(np.shape(C))}")
    if C is None and beta != 0:
        raise ValueError(f"beta={beta} scales C_in, but no C was given: pass C, or beta=0")
    return M, N, K


def mma(a, b, c, model="rn", acc="fp32"):
    """One Tensor Core step on 16x16 fragments: D = A B + C.

    ``a`` and ``b`` are 16x16 FP16 (or BF16) arrays, ``c`` a 16x16 float32 accumulator (float16
    for acc="fp16"). Returns D with the accumulator's dtype.
    """
    for name, x in (("a", a), ("b", b)):
        input_format(x, name)
        if x.shape != (FRAG, FRAG):
            raise ValueError(f"{name} must be a 16 x 16 fragment, got shape {x.shape}")
    c = np.asarray(c)
    if c.shape != (FRAG, FRAG):
        raise ValueError(f"c must be a 16 x 16 fragment, got shape {c.shape}")
    return _mma64(a.astype(np.float64), b.astype(np.float64), c, model, acc)


def _mma64(a, b, c, model, acc):
    products = a[:, None, :] * b.T[None, :, :]          # [i, j, k] = a[i, k] b[k, j]
    return mma_update(products, c, model, acc)


@dataclass
class Stats:
    """What the emulated kernel did: counts that show the structure of the pipeline."""
    blocks: int = 0
    smem_tiles: int = 0          # K tiles copied into shared memory, per block, summed
    mma_steps: int = 0           # 16x16x16 MMAs
    fragment_loads: int = 0      # A and B fragments read from shared memory into registers
    c_writes: int = 0            # elements of C written (each exactly once)


def _epilogue(acc, alpha, beta, c_in):
    """alpha * acc + beta * C_in in FP32, as the kernel's epilogue does (C_in unread if beta=0)."""
    acc = acc.astype(np.float32)
    if beta == 0:
        return (np.float32(alpha) * acc).astype(np.float32)
    scaled_c = (np.float32(beta) * c_in.astype(np.float32)).astype(np.float32)
    return (np.float64(np.float32(alpha)) * acc + scaled_c).astype(np.float32)


def emulate(A, B, C=None, alpha=1.0, beta=0.0, tiling=LESSON, model="rn", acc="fp32",
            stats=False):
    """C_out = alpha A B + beta C, computed like the WMMA kernel with ``tiling``.

    A (M x K) and B (K x N) are FP16 or BF16 NumPy arrays; C is M x N (read as float32). Returns a
    float32 array, and a :class:`Stats` when ``stats=True``.
    """
    check_model(model, acc)
    t = get_tiling(tiling)
    M, N, K = _check_operands(A, B, C, beta)
    A64, B64 = A.astype(np.float64), B.astype(np.float64)
    acc_dtype = np.float16 if acc == "fp16" else np.float32
    out = np.empty((M, N), dtype=np.float32)
    st = Stats()
    for r0 in range(0, M, t.block_m):
        for c0 in range(0, N, t.block_n):
            st.blocks += 1
            # the block's accumulators, [warp_m, warp_n, frag_i, frag_j]: registers, kept across K
            regs = np.zeros((t.warps_m, t.warps_n, t.frags_m, t.frags_n, FRAG, FRAG), acc_dtype)
            for k0 in range(0, K, t.block_k):
                a_tile = _tile(A64, r0, k0, t.block_m, t.block_k)     # shared memory, zero-filled
                b_tile = _tile(B64, k0, c0, t.block_k, t.block_n)
                st.smem_tiles += 1
                for ks in range(t.k_steps):
                    kk = slice(ks * FRAG, (ks + 1) * FRAG)
                    for wm in range(t.warps_m):
                        for wn in range(t.warps_n):
                            a_frags = [a_tile[(wm * t.frags_m + i) * FRAG:][:FRAG, kk]
                                       for i in range(t.frags_m)]
                            b_frags = [b_tile[kk, (wn * t.frags_n + j) * FRAG:][:, :FRAG]
                                       for j in range(t.frags_n)]
                            st.fragment_loads += t.frags_m + t.frags_n
                            for i, a_frag in enumerate(a_frags):
                                for j, b_frag in enumerate(b_frags):
                                    regs[wm, wn, i, j] = _mma64(a_frag, b_frag, regs[wm, wn, i, j],
                                                                model, acc)
                                    st.mma_steps += 1
            st.c_writes += _store(out, regs, r0, c0, t, alpha, beta, C)
    return (out, st) if stats else out


def _tile(X, r0, c0, rows, cols):
    """X[r0:r0+rows, c0:c0+cols] with zeros where it runs past the matrix (the cp.async zero-fill)."""
    tile = np.zeros((rows, cols))
    part = X[r0:r0 + rows, c0:c0 + cols]
    tile[:part.shape[0], :part.shape[1]] = part
    return tile


def _store(out, regs, r0, c0, t, alpha, beta, C):
    """Write the block's fragments to C once, skipping rows and columns past the edges."""
    # [wm, wn, i, j, r, c] -> rows (wm, i, r), columns (wn, j, c)
    block = regs.transpose(0, 2, 4, 1, 3, 5).reshape(t.block_m, t.block_n)
    rows, cols = min(t.block_m, out.shape[0] - r0), min(t.block_n, out.shape[1] - c0)
    c_in = None if C is None else np.asarray(C)[r0:r0 + rows, c0:c0 + cols]
    out[r0:r0 + rows, c0:c0 + cols] = _epilogue(block[:rows, :cols], alpha, beta, c_in)
    return rows * cols


def emulate_steps(A, B, C=None, alpha=1.0, beta=0.0, model="rn", acc="fp32"):
    """The same numbers as :func:`emulate` with every output at once: one loop over K steps."""
    check_model(model, acc)
    M, N, K = _check_operands(A, B, C, beta)
    A64, B64 = A.astype(np.float64), B.astype(np.float64)
    regs = np.zeros((M, N), dtype=np.float16 if acc == "fp16" else np.float32)
    for k0 in range(0, K, FRAG):
        a = A64[:, k0:k0 + FRAG]                          # (M, <=16)
        b = B64[k0:k0 + FRAG, :]                          # (<=16, N)
        products = a[:, None, :] * b.T[None, :, :]        # (M, N, <=16)
        regs = mma_update(products, regs, model, acc)
    return _epilogue(regs, alpha, beta, None if C is None else np.asarray(C))


def ownership(M, N, tiling=LESSON):
    """Which warp (within its block) and which of that warp's fragments computes each element of
    an M x N output: two integer arrays of shape (M, N)."""
    t = get_tiling(tiling)
    rows, cols = np.arange(M) % t.block_m, np.arange(N) % t.block_n
    wm, wn = rows // t.warp_m, cols // t.warp_n
    fi, fj = (rows % t.warp_m) // FRAG, (cols % t.warp_n) // FRAG
    warp = wm[:, None] * t.warps_n + wn[None, :]
    frag = fi[:, None] * t.frags_n + fj[None, :]
    return warp, frag
