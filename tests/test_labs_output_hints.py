"""Mistakes named from the wrong result alone: a shared tile indexed the wrong way round (the
tiled GEMM labs) and a WMMA fragment at the wrong tile (lab 12); a right result, or another
wrong one, is never given those names."""
import numpy as np
import pytest

from gemmlab.grading import check
from gemmlab.labs import wmma
from gemmlab.labs.output_hints import (_tiles_transposed, shared_index_swapped,
                                       wrong_fragment_tile)

rng = np.random.default_rng(7)


def _tiled_with_swapped_tile(A, B, tile, swap_a=True, swap_b=False):
    """What a tiled kernel computes when it stores sA[tx, ty] instead of sA[ty, tx]: a loop over
    tiles and threads, written out (not the formula the recogniser uses)."""
    M, K = A.shape
    N = B.shape[1]
    C = np.zeros((M, N))
    for by in range(-(-M // tile)):
        for bx in range(-(-N // tile)):
            for t in range(-(-K // tile)):
                sA, sB = np.zeros((tile, tile)), np.zeros((tile, tile))
                for ty in range(tile):
                    for tx in range(tile):
                        row, col, ka, kb = by * tile + ty, bx * tile + tx, t * tile + tx, t * tile + ty
                        a = A[row, ka] if row < M and ka < K else 0.0
                        b = B[kb, col] if kb < K and col < N else 0.0
                        sA[(tx, ty) if swap_a else (ty, tx)] = a
                        sB[(tx, ty) if swap_b else (ty, tx)] = b
                for ty in range(tile):
                    for tx in range(tile):
                        row, col = by * tile + ty, bx * tile + tx
                        if row < M and col < N:
                            C[row, col] += sum(sA[ty, k] * sB[k, tx] for k in range(tile))
    return C


@pytest.mark.parametrize("shape", [(8, 8, 8), (10, 7, 13)])
@pytest.mark.parametrize("swap_a,swap_b,named", [(True, False, "tile of A "),
                                                 (False, True, "tile of B "),
                                                 (True, True, "tile of A and of B")])
def test_a_swapped_shared_index_is_named(shape, swap_a, swap_b, named):
    M, N, K = shape
    A, B = rng.uniform(-1, 1, (M, K)), rng.uniform(-1, 1, (K, N))
    C = _tiled_with_swapped_tile(A, B, 4, swap_a, swap_b)
    assert not np.allclose(C, A @ B)
    assert named in shared_index_swapped(A, B, C, 4)


def test_a_right_or_otherwise_wrong_result_is_not_called_swapped():
    A, B = rng.uniform(-1, 1, (9, 9)), rng.uniform(-1, 1, (9, 9))
    assert shared_index_swapped(A, B, A @ B, 4) is None
    assert shared_index_swapped(A, B, A @ B + 1, 4) is None
    assert shared_index_swapped(A, B, _tiles_transposed(A, 4)[:9, :9], 4) is None


def _fragment_loop(load_a, load_b, store):
    def lab(A, B, C):
        M, K = A.shape
        N = B.shape[1]
        for i in range(0, M, 16):
            for j in range(0, N, 16):
                at = {"i": i, "j": j}
                acc = wmma.fill_fragment(0.0)
                for k in range(0, K, 16):
                    at["k"] = k
                    a = wmma.load_matrix_sync(A, *(at[x] for x in load_a))
                    b = wmma.load_matrix_sync(B, *(at[x] for x in load_b))
                    acc = wmma.mma_sync(a, b, acc)
                wmma.store_matrix_sync(C, *(at[x] for x in store), acc)
    return lab


@pytest.mark.parametrize("load_a,load_b,store,named", [
    ("ki", "kj", "ij", "A's fragment loaded at (k, i) instead of (i, k)"),
    ("ik", "jk", "ij", "B's fragment loaded at (j, k) instead of (k, j)"),
    ("ki", "jk", "ij", "A's fragment loaded at (k, i) instead of (i, k) and B's"),
])
def test_a_wmma_fragment_at_the_wrong_tile_is_named_by_check(load_a, load_b, store, named,
                                                             capsys):
    result = check("12.lab_wmma", _fragment_loop(load_a, load_b, store))
    assert result.status == "fail"
    assert named in result.feedback
    assert "elements are wrong" not in result.feedback


def test_the_right_fragment_loop_passes_and_a_random_result_is_not_named():
    assert check("12.lab_wmma", _fragment_loop("ik", "kj", "ij")).status == "pass"
    A, B = rng.uniform(-1, 1, (40, 40)), rng.uniform(-1, 1, (40, 40))
    assert wrong_fragment_tile(A, B, rng.uniform(-1, 1, (40, 40))) is None
    assert wrong_fragment_tile(A, B, A @ B) is None
