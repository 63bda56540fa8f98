"""FLOPs and bytes of attention for B x H heads of N queries and keys, head width d.

**Unfused** (three kernels, S and P in memory): S = Q K^T reads Q and K and writes S; the softmax
reads S and writes P; O = P V reads P and V and writes O: 4 N d + 4 N^2 elements per head.
**Fused**: Q read once and O written once, and each K/V tile loaded once per query tile of
``Br`` rows: K and V read ceil(N / Br) times each (fewer with ``causal``: the skipped tiles).
That counts every re-read as crossing the HBM boundary; ``kv_cached=True`` counts K and V once
(a cache as large as an H100's 50 MB L2 holds a head's K and V at N = 4096, d = 128: 2 MiB).

FLOPs count a multiply-add as 2 and an exponential, a comparison or a division as 1 (the
convention of :func:`gemmlab.perfmodel.gemm_flops`; a GPU's special-function units spend more
on exp, which is why FlashAttention-2 and -3 work to take exp off the critical path).
"""
import math

from ..numeric_args import whole_number
from ..perfmodel.traffic import attention_scores_bytes, gemm_flops
from .tiled import kv_tiles_visited

VERSIONS = ("unfused", "fused")


def _version(version):
    if version not in VERSIONS:
        raise ValueError(f"version must be one of {', '.join(VERSIONS)}, got {version!r}")
    return version


def attention_traffic(B, H, N, d, version, itemsize=2, Br=128, Bc=64, causal=False,
                      kv_cached=False):
    """Bytes moved by the ``version`` ("unfused" or "fused") of attention's forward pass."""
    B, H, N, d = (whole_number(n, v) for n, v in (("B", B), ("H", H), ("N", N), ("d", d)))
    itemsize = whole_number("itemsize", itemsize)
    heads = B * H
    if _version(version) == "unfused":
        return 4 * heads * N * d * itemsize + 4 * attention_scores_bytes(heads, N, itemsize)
    if kv_cached:
        return 4 * heads * N * d * itemsize
    kv_reads = kv_tiles_visited(N, Br, Bc, causal) * Bc       # K rows loaded, summed over tiles
    return heads * (2 * N * d + 2 * kv_reads * d) * itemsize


def attention_flops(B, H, N, d, version, Bc=64):
    """FLOPs of the ``version`` of attention's forward pass (not causal): the two products
    (4 N^2 d), the softmax (max, subtract, exp, add: 4 N^2), the normalisation (unfused: P divided
    by l, N^2; fused: O divided by l, N d) and, fused only, the rescaling of l and acc each time a
    K/V tile of ``Bc`` rows arrives (an exp, l and d elements of acc: d + 3 per row per tile)."""
    B, H, N, d = (whole_number(n, v) for n, v in (("B", B), ("H", H), ("N", N), ("d", d)))
    heads = B * H
    products = 2 * gemm_flops(N, N, d)
    softmax = 4 * N * N
    if _version(version) == "unfused":
        return heads * (products + softmax + N * N)
    rescale = N * math.ceil(N / whole_number("Bc", Bc)) * (d + 3)
    return heads * (products + softmax + N * d + rescale)
