"""A Triton matmul, one of the libraries the Hopper ladder is measured against: the classic
grouped-tile kernel (each program one BM x BN tile of C, programs walked GROUP_M rows of tiles at
a time so that neighbours share B in the L2), with tile configurations autotuned per shape.

Needs Triton and PyTorch (imported when called); operands are CuPy or PyTorch CUDA arrays.
"""
import functools

GROUP_M = 8
# (BM, BN, BK, stages, warps): large tiles for large problems, thin ones for decode (M <= 64)
CONFIGS = [(128, 256, 64, 3, 8), (128, 128, 64, 4, 4), (128, 128, 64, 3, 8), (64, 256, 64, 4, 4),
           (64, 128, 128, 4, 4), (16, 128, 128, 4, 4), (16, 64, 256, 4, 4)]


@functools.lru_cache(maxsize=None)
def _kernel():
    import triton
    import triton.language as tl

    configs = [triton.Config({"BM": bm, "BN": bn, "BK": bk}, num_stages=s, num_warps=w)
               for bm, bn, bk, s, w in CONFIGS]

    @triton.autotune(configs=configs, key=["M", "N", "K"])
    @triton.jit
    def matmul(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn, GROUP: tl.constexpr,
               BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        pid = tl.program_id(0)
        tiles_m, tiles_n = tl.cdiv(M, BM), tl.cdiv(N, BN)
        group = pid // (GROUP * tiles_n)
        first_m = group * GROUP
        rows = tl.minimum(tiles_m - first_m, GROUP)
        pid_m = first_m + (pid % (GROUP * tiles_n)) % rows
        pid_n = (pid % (GROUP * tiles_n)) // rows
        rm = pid_m * BM + tl.arange(0, BM)
        rn = pid_n * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, tl.cdiv(K, BK)):
            kk = k * BK + rk
            x = tl.load(a + rm[:, None] * sam + kk[None, :] * sak,
                        mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
            y = tl.load(b + kk[:, None] * sbk + rn[None, :] * sbn,
                        mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
            acc = tl.dot(x, y, acc)
        tl.store(c + rm[:, None] * scm + rn[None, :] * scn, acc.to(c.dtype.element_ty),
                 mask=(rm[:, None] < M) & (rn[None, :] < N))

    return matmul


def launcher(a, b, c):
    """A zero-argument function computing c = a b (row-major, FP16 or BF16 in, c's type out)
    with the autotuned Triton kernel; the first call autotunes for the shape."""
    import torch
    a, b, c = (torch.as_tensor(x, device="cuda") for x in (a, b, c))
    (M, K), N = a.shape, b.shape[1]
    kern = _kernel()

    def grid(meta):
        return (-(-M // meta["BM"]) * -(-N // meta["BN"]),)

    def launch():
        kern[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                   c.stride(0), c.stride(1), GROUP=GROUP_M)
    return launch
