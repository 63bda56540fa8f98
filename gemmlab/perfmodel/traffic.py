"""How many operations and how many bytes: GEMM FLOP counts and traffic models, element-wise
kernels, operator fusion, the intensity of a linear layer, and the attention score tensor.

Traffic here is a *model* of the bytes that cross one boundary (HBM <-> chip, or slow <-> fast
memory), each element counted once per time it is brought in; it is not a hardware counter.
"""
import math

from ..numeric_args import whole_number

TRAFFIC_MODELS = ("ideal", "no_reuse", "tiled")


def gemm_flops(M, N, K):
    """FLOPs of C[M,N] = A[M,K] B[K,N] by the usual convention: one multiply-add counts 2, 2MNK."""
    return 2 * whole_number("M", M) * whole_number("N", N) * whole_number("K", K)


def gemm_flops_exact(M, N, K):
    """FLOPs actually needed: MNK multiplications and MN(K-1) additions, MN(2K-1) in all."""
    return whole_number("M", M) * whole_number("N", N) * (2 * whole_number("K", K) - 1)


def gemm_storage_bytes(M, N, K, itemsize=4):
    """Bytes the three matrices occupy: (MK + KN + MN) * itemsize."""
    M, N, K = whole_number("M", M), whole_number("N", N), whole_number("K", K)
    return (M * K + K * N + M * N) * whole_number("itemsize", itemsize)


def gemm_traffic(M, N, K, model="ideal", itemsize=4, tile=None):
    """Bytes moved across the boundary by C = AB under one of three models.

    - ``"ideal"``: every element of A and B is brought in once and C written once (the minimum).
    - ``"no_reuse"``: each output reads its whole row of A and column of B, 2MNK + MN elements.
    - ``"tiled"``: T x T output tiles, each sweeping K with T x T tiles of A and B kept in fast
      memory; A is read ceil(N/T) times, B ceil(M/T) times, C written once (no old C is read).

    The first two are the tiled model at its extremes: T = 1 is no reuse, T >= max(M, N) ideal.
    """
    M, N, K = whole_number("M", M), whole_number("N", N), whole_number("K", K)
    if model not in TRAFFIC_MODELS:
        raise ValueError(f"unknown traffic model {model!r}; expected one of {', '.join(TRAFFIC_MODELS)}")
    if model == "tiled":
        if tile is None:
            raise ValueError("the tiled model needs a tile size: gemm_traffic(..., model='tiled', tile=32)")
        T = whole_number("tile", tile)
        elements = math.ceil(N / T) * M * K + math.ceil(M / T) * K * N + M * N
    elif tile is not None:
        raise ValueError(f"tile={tile!r} only applies to model='tiled', not {model!r}")
    elif model == "ideal":
        elements = M * K + K * N + M * N
    else:
        elements = 2 * M * N * K + M * N
    return elements * whole_number("itemsize", itemsize)


def tile_workspace_bytes(tile, itemsize=4):
    """Fast memory one T x T output tile needs: a tile of A, a tile of B and the C accumulators."""
    return 3 * whole_number("tile", tile) ** 2 * whole_number("itemsize", itemsize)


def vector_add_counts(n, itemsize=4):
    """(FLOPs, bytes) of C[i] = A[i] + B[i]: n additions; read A and B, write C, each once."""
    n = whole_number("n", n)
    return n, 3 * n * whole_number("itemsize", itemsize)


def fusion_traffic(n, itemsize=4):
    """u = x + y then z = u * w on n elements, as two kernels or fused into one.

    Unfused, each kernel reads two arrays and writes one, and u makes a round trip through memory:
    6n elements. Fused, u stays on chip: read x, y, w and write z, 4n elements. Both do 2n FLOPs.
    """
    n = whole_number("n", n)
    s = whole_number("itemsize", itemsize)
    return {"flops": 2 * n, "unfused_bytes": 6 * n * s, "fused_bytes": 4 * n * s}


def linear_intensity(M, K, N, itemsize=4):
    """FLOP/B of a linear layer X[M,K] W[K,N] when X, W and Y each cross the boundary once.

    M is the number of input rows processed together (batch x positions); growing M reuses each
    weight more times, so the intensity grows with M and saturates near the square-GEMM value.
    """
    return gemm_flops(M, N, K) / gemm_traffic(M, N, K, "ideal", itemsize)


def attention_scores_bytes(heads, seq_len, itemsize=2):
    """Bytes of one full attention score (or probability) tensor: heads x T x T elements."""
    return (whole_number("heads", heads) * whole_number("seq_len", seq_len) ** 2
            * whole_number("itemsize", itemsize))
