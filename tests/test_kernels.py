"""Every rung of the GEMM ladder against a float64 reference, at shapes that do not fit the tiles.

On the simulator (default) with the small simulator tiles; with ``GEMMLAB_BACKEND=gpu`` the same
tests run the GPU tiles at the GPU shapes of ``gl.device.sizes()``. Outputs are poisoned with NaN
before each launch, so an element the kernel forgets to write fails the test.
"""
import numpy as np
import pytest

import gemmlab as gl
from gemmlab import kernels

cuda = gl.device.cuda()
SHAPES = gl.device.sizes()["gemm_shapes"]
EPS32 = np.finfo(np.float32).eps

# A second tile set per rung: odd thread tiles, chunks of 2 and 1, odd BK, non-power-of-two T.
OTHER_TILES = {
    "naive": {"BX": 3, "BY": 5},
    "tiled": {"T": 5},
    "pingpong": {"T": 3},
    "outer": {"BM": 6, "BN": 8, "BK": 3, "TM": 2, "TN": 4},
    "twolevel": {"BM": 8, "BN": 12, "BK": 2, "TM": 4, "TN": 3},
    "unrolled": {"BM": 6, "BN": 8, "BK": 3, "TM": 2, "TN": 4, "VW": 1, "MINB": 1},
}


def _problem(shape):
    seed = int(np.random.SeedSequence().entropy % 2**32)
    rng = np.random.default_rng(seed)
    M, N, K = shape
    A = rng.standard_normal((M, K)).astype(np.float32)
    B = rng.standard_normal((K, N)).astype(np.float32)
    C = rng.standard_normal((M, N)).astype(np.float32)
    alpha, beta = float(rng.uniform(0.5, 2.0)), float(rng.uniform(-1.5, -0.25))
    return seed, A, B, C, alpha, beta


def _launch(name, tiles, A, B, C_in, alpha, beta):
    """Run the rung's kernel directly, into a NaN-poisoned output."""
    rung = kernels.get(name)
    plan = rung.plan(**tiles)
    M, N = A.shape[0], B.shape[1]
    out = cuda.to_device(np.full((M, N), np.nan, np.float32))
    rung.kernel(**tiles)[plan.grid(M, N), plan.block](
        cuda.to_device(A), cuda.to_device(B), cuda.to_device(C_in), out,
        np.float32(alpha), np.float32(beta))
    return out.copy_to_host()


def _assert_close(got, A, B, C, alpha, beta, context):
    """Within the float32 dot-product error bound K * eps * (|alpha| |A||B| + |beta C|)."""
    A64, B64, C64 = (x.astype(np.float64) for x in (A, B, C))
    ref = alpha * A64 @ B64 + beta * C64
    scale = abs(alpha) * np.abs(A64) @ np.abs(B64) + abs(beta * C64)
    bound = 2 * (A.shape[1] + 2) * EPS32 * scale + 1e-30
    assert np.isfinite(got).all(), f"{context}: NaN left in the output (an element not written)"
    worst = np.max(np.abs(got - ref) / bound)
    assert worst <= 1, f"{context}: error {worst:.2f}x the float32 bound"


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("name", kernels.names())
def test_rung_matches_float64_reference(name, shape):
    seed, A, B, C, alpha, beta = _problem(shape)
    tiles = kernels.get(name).default_tiles()
    got = _launch(name, tiles, A, B, C, alpha, beta)
    _assert_close(got, A, B, C, alpha, beta, f"{name} {tiles} shape {shape} seed {seed}")


@pytest.mark.parametrize("name", kernels.names())
def test_rung_with_other_tiles(name):
    seed, A, B, C, alpha, beta = _problem((13, 11, 7))
    got = _launch(name, OTHER_TILES[name], A, B, C, alpha, beta)
    _assert_close(got, A, B, C, alpha, beta, f"{name} {OTHER_TILES[name]} seed {seed}")


# 16 x 4 thread tiles in two warps: each warp owns a 4 x 8 patch (warp tiling), not a row of 16.
WARP_TILED = {"BM": 16, "BN": 64, "BK": 4, "TM": 4, "TN": 4}


@pytest.mark.parametrize("name", ["outer", "twolevel", "unrolled"])
def test_warp_tiled_rungs_mix_inside_and_edge_tiles(name):
    """Blocks wholly inside the matrices take the unchecked loads, the others the checked ones;
    M, N and K all end mid-tile so both paths run in one launch."""
    assert kernels.warp_patch(**{k: WARP_TILED[k] for k in ("BM", "BN", "TM", "TN")}) == (4, 8)
    tiles = {**WARP_TILED, **({"VW": 1, "MINB": 1} if name == "unrolled" else {})}
    seed, A, B, C, alpha, beta = _problem((37, 150, 9))
    got = _launch(name, tiles, A, B, C, alpha, beta)
    _assert_close(got, A, B, C, alpha, beta, f"{name} {tiles} seed {seed}")


def test_warp_patch_falls_back_to_row_major_order():
    assert kernels.warp_patch(128, 128, 8, 8) == (4, 8)     # 16 x 16 threads: warp tiling
    assert kernels.warp_patch(128, 32, 8, 8) == (8, 4)      # 4 threads per row: 8 rows of 4
    assert kernels.warp_patch(16, 16, 8, 8) == (2, 2)       # a block smaller than a warp
    assert kernels.warp_patch(8, 512, 8, 8) == (1, 32)      # 64 threads per row


@pytest.mark.parametrize("name", kernels.names())
def test_beta_zero_does_not_read_c(name):
    """BLAS convention: with beta = 0, C_in is not read, so NaN there must not leak out."""
    seed, A, B, C, alpha, _ = _problem((9, 10, 6))
    C_nan = np.full_like(C, np.nan)
    got = _launch(name, kernels.get(name).default_tiles(), A, B, C_nan, alpha, 0.0)
    _assert_close(got, A, B, np.zeros_like(C), alpha, 0.0, f"{name} beta=0 seed {seed}")


def test_registry_lists_the_ladder_in_lesson_order():
    assert kernels.names() == ["naive", "tiled", "pingpong", "outer", "twolevel", "unrolled"]
    lessons = [rung.lesson for rung in kernels.LADDER]
    assert lessons == sorted(lessons)
    for rung in kernels.LADDER:
        assert rung.lesson.isdigit() and rung.description
        assert rung.module.__name__ == f"gemmlab.kernels.{rung.name}"
        assert set(rung.default_tiles()) == set(rung.params)


@pytest.mark.parametrize("name", kernels.names())
def test_default_tiles_of_both_backends_are_in_the_rung_file_and_launchable(name):
    rung = kernels.get(name)
    assert rung.default_tiles() == rung.module.TILES[gl.device.backend()]
    for backend in ("sim", "gpu"):
        tiles = rung.default_tiles(backend)
        assert set(tiles) == set(rung.params)
        rung.plan(**tiles)                       # within a GPU block's limits
    assert not any(key.startswith("tiles_") for key in gl.device.sizes())
    with pytest.raises(ValueError, match="expected one of gpu, sim"):
        rung.default_tiles("tpu")


def test_a_named_step_is_read_from_the_kernel_source(capsys):
    k_tile = kernels.get("pingpong").step_source("k_tile")
    assert k_tile.startswith("cur = t % 2") and "cuda.syncthreads()" in k_tile.splitlines()[-1]
    assert k_tile.count("cuda.syncthreads()") == 1           # two buffers, one barrier per tile
    assert "# ---- " not in k_tile                           # nested markers are left out
    prefetch = kernels.get("pingpong").step_source("prefetch")
    assert prefetch.startswith("a_next = ") and "B, (t + 1) * T + ty, col" in prefetch
    assert prefetch in k_tile
    kernels.show_step("twolevel", "register_pingpong")
    shown = capsys.readouterr().out
    assert "outer_update(acc, a0, b0)" in shown and "outer_update(acc, a1, b1)" in shown


def test_an_unknown_step_names_the_marked_ones():
    with pytest.raises(ValueError, match="no step 'epilogue'; its steps are k_tile, prefetch"):
        kernels.get("pingpong").step_source("epilogue")
    with pytest.raises(ValueError, match="its steps are none"):
        kernels.show_step("naive", "k_tile")


@pytest.mark.parametrize("name", kernels.names())
def test_every_marked_step_is_closed(name):
    rung = kernels.get(name)
    for step in rung.steps():
        assert rung.step_source(step).strip()


def test_compiled_kernels_are_cached_per_tile_constants():
    rung = kernels.get("tiled")
    assert rung.kernel(T=4) is rung.kernel(T=4)
    assert rung.kernel(T=4) is not rung.kernel(T=3)


def test_unknown_rung_names_the_valid_ones():
    with pytest.raises(ValueError, match="Did you mean 'tiled'"):
        kernels.get("tilde")


@pytest.mark.skipif(gl.device.backend() != "sim", reason="counts blocks inside the simulator")
def test_naive_launches_one_block_per_bx_by_outputs(monkeypatch):
    """The grid covers C with BY x BX blocks of outputs (one per thread), not one block per output
    (which would launch BX*BY times too many, nearly all idle)."""
    from numba.cuda.simulator import kernel as simulated
    launched = []
    run = simulated.BlockManager.run
    monkeypatch.setattr(simulated.BlockManager, "run",
                        lambda self, point, *args: launched.append(point) or run(self, point, *args))
    M, N, K = 10, 12, 3
    seed, A, B, C, alpha, beta = _problem((M, N, K))
    tiles = {"BX": 8, "BY": 4}
    got = _launch("naive", tiles, A, B, C, alpha, beta)
    _assert_close(got, A, B, C, alpha, beta, f"naive {tiles} seed {seed}")
    assert len(launched) == -(-N // 8) * -(-M // 4) == 6
    plan = kernels.get("naive").plan(**tiles)
    # the traffic model keeps the naive kernel's reuse of 1: every output reads its row and column
    assert plan.dram_bytes(M, N, K) == 4 * (2 * M * N * K + M * N)
