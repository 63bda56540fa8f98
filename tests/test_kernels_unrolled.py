"""The ``unrolled`` rung's two paths: blocks wholly inside the matrices, with 16-byte aligned rows,
read their tiles 4 floats at a time without bounds checks; every other block takes the checked
element-wise loads. Both against a float64 reference on fresh random inputs, outputs poisoned.
(test_kernels.py runs the rung like every other one; here: which path runs, and when.)"""
import re

import numpy as np
import pytest

import gemmlab as gl
from gemmlab.kernels import _vector, unrolled

cuda = gl.device.cuda()
EPS32 = np.finfo(np.float32).eps
SIM = gl.device.backend() == "sim"
# Small tiles on the simulator (16 x 32 blocks of one warp, runs of 4 along K and N); on a GPU
# the GPU's own.
TILES = ({"BM": 16, "BN": 32, "BK": 8, "TM": 4, "TN": 4, "VW": 4, "MINB": 1} if SIM
         else gl.kernels.get("unrolled").default_tiles())


def _problem(M, N, K):
    seed = int(np.random.SeedSequence().entropy % 2**32)
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((M, K)).astype(np.float32)
    B = rng.standard_normal((K, N)).astype(np.float32)
    C = rng.standard_normal((M, N)).astype(np.float32)
    return seed, A, B, C


def _run(A, B, C, alpha, beta, tiles=TILES):
    """The kernel itself on device copies, into a NaN-poisoned output."""
    rung = gl.kernels.get("unrolled")
    plan = rung.plan(**tiles)
    M, N = C.shape
    out = cuda.to_device(np.full((M, N), np.nan, np.float32))
    rung.kernel(**tiles)[plan.grid(M, N), plan.block](
        A if not isinstance(A, np.ndarray) else cuda.to_device(A), cuda.to_device(B),
        cuda.to_device(C), out, np.float32(alpha), np.float32(beta))
    return out.copy_to_host()


def _assert_close(got, A, B, C, alpha, beta, context):
    A64, B64, C64 = (x.astype(np.float64) for x in (A, B, C))
    ref = alpha * A64 @ B64 + beta * C64
    bound = 2 * (A.shape[1] + 2) * EPS32 * (abs(alpha) * np.abs(A64) @ np.abs(B64)
                                            + abs(beta * C64)) + 1e-30
    assert np.isfinite(got).all(), f"{context}: an element was not written"
    worst = np.max(np.abs(got - ref) / bound)
    assert worst <= 1, f"{context}: error {worst:.2f}x the float32 bound"


@pytest.fixture
def vector_loads(monkeypatch):
    """The 128-bit loads, as (shape of the array, row, column) (simulator only: there the kernel
    calls _vector.load4 as Python)."""
    calls = []
    if SIM:             # a GPU kernel cannot call Python: there the load stays what it is
        load4 = _vector.load4
        monkeypatch.setattr(_vector, "load4",
                            lambda X, r, c: calls.append((X.shape, r, c)) or load4(X, r, c))
    return calls


def _shape_with_inside_and_edge_blocks():
    """Two block rows and two block columns inside, one ragged of each; K a multiple of BK and
    N of 4, so the inside blocks may read 4 floats at a time."""
    BM, BN, BK = TILES["BM"], TILES["BN"], TILES["BK"]
    return 2 * BM + 5, 2 * BN + 12, 3 * BK


@pytest.mark.parametrize("VW", [4, 1])
def test_inside_blocks_take_the_fast_path_edge_blocks_the_checked_one(vector_loads, VW):
    """VW = 4: 128-bit loads in the inside blocks; VW = 1: their unchecked loads one float each."""
    M, N, K = _shape_with_inside_and_edge_blocks()
    seed, A, B, C = _problem(M, N, K)
    tiles = {**TILES, "VW": VW}
    got = _run(A, B, C, 1.5, -0.5, tiles)
    _assert_close(got, A, B, C, 1.5, -0.5, f"unrolled {tiles} {M}x{N}x{K} seed {seed}")
    if SIM and VW == 1:
        assert vector_loads == []
    elif SIM:
        BM, BN = TILES["BM"], TILES["BN"]
        from_a = [(r, c) for shape, r, c in vector_loads if shape == A.shape]
        from_b = [(r, c) for shape, r, c in vector_loads if shape == B.shape]
        # the 2 x 2 inside blocks, each reading its BM x K strip of A and K x BN strip of B once
        assert (len(from_a), len(from_b)) == (4 * BM * K // 4, 4 * K * BN // 4)
        assert max(r for r, _ in from_a) < 2 * BM and max(c for _, c in from_b) + 4 <= 2 * BN


@pytest.mark.parametrize("M,N,K,why", [
    (32, 130, 12, "rows of B are 130 floats: not 16-byte aligned"),
    (32, 128, 10, "rows of A are 10 floats, and K is not a multiple of BK"),
])
def test_misaligned_rows_take_the_checked_path(vector_loads, M, N, K, why):
    M, N = (M, N) if SIM else (4 * M, 2 * N)
    seed, A, B, C = _problem(M, N, K)
    got = _run(A, B, C, 0.75, 0.0)
    _assert_close(got, A, B, np.zeros_like(C), 0.75, 0.0, f"{why}, seed {seed}")
    if SIM:
        assert vector_loads == [], why


def test_an_array_that_starts_off_a_16_byte_boundary_is_read_safely():
    """A contiguous view one float into its buffer: every row start is 4 bytes off. On a GPU a
    128-bit load there would fault; the kernel must see it and take the checked loads."""
    M, N, K = _shape_with_inside_and_edge_blocks()
    seed, A, B, C = _problem(M, N, K)
    buffer = cuda.to_device(np.concatenate([[np.float32(0)], A.ravel()]))
    shifted = buffer[1:].reshape(M, K)
    if not SIM:
        assert shifted.device_ctypes_pointer.value % 16 == 4
    got = _run(shifted, B, C, 1.0, 1.0)
    _assert_close(got, A, B, C, 1.0, 1.0, f"A one float off, seed {seed}")


@pytest.mark.parametrize("tiles,words", [
    ({"VW": 2}, "VW (floats per global load) must be 1 or 4"),
    ({"BK": 2, "VW": 4}, "runs of 4 consecutive floats"),
    ({"MINB": 0}, "MINB (blocks per SM asked of the compiler) must be >= 1"),
])
def test_bad_options_are_refused(tiles, words):
    with pytest.raises(ValueError, match=re.escape(words)):
        gl.kernels.get("unrolled").plan(**{**unrolled.TILES["gpu"], **tiles})


@pytest.mark.skipif(not SIM, reason="calls the composed steps as Python (the simulator's device "
                                      "functions are plain Python)")
def test_the_k_loop_is_written_out_in_steps_of_one():
    """unroll composes BK calls of the step, in order, whatever BK is."""
    seen = []
    steps = unrolled.unroll(lambda As, Bs, s, k, ty, tx, acc: seen.append(k), 7)
    steps(None, None, 0, 3, 0, 0, None)
    assert seen == list(range(3, 10))
