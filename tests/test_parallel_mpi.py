"""Megatron's FFN and attention on real MPI processes (one per rank), checked against the float64
reference and the single-process simulation, always under a timeout."""
import pytest

from gemmlab.parallel import mpi

pytest.importorskip("mpi4py")

TIMEOUT = 60


@pytest.mark.parametrize("n_ranks", [2, 4])
def test_ffn_over_mpi_matches_the_reference_and_the_simulation(n_ranks):
    report = mpi.run_on_mpi("ffn", n_ranks, tokens=7, d_model=12, bias=True, seed=n_ranks,
                            timeout=TIMEOUT)
    assert report["n_ranks"] == n_ranks
    assert report["verified"] and report["max_error"] < 1e-4
    assert report["identical_to_simulation"]
    S = 7 * 12 * 4
    assert report["sent_bytes_per_rank"] == [2 * (n_ranks - 1) * S // n_ranks] * n_ranks


@pytest.mark.parametrize("n_kv_heads,causal", [(None, True), (2, False)])
def test_attention_over_mpi_matches_the_reference_and_the_simulation(n_kv_heads, causal):
    report = mpi.run_on_mpi("attention", 4, tokens=9, d_model=16, n_heads=8,
                            n_kv_heads=n_kv_heads, causal=causal, bias=True, timeout=TIMEOUT)
    assert report["verified"] and report["identical_to_simulation"]


def test_bad_requests_fail_before_launching():
    with pytest.raises(ValueError, match="n_heads = 6 must be divisible by p = 4"):
        mpi.run_on_mpi("attention", 4, tokens=3, d_model=12, n_heads=6)
    with pytest.raises(ValueError, match="F = 20 must be divisible by p = 3"):
        mpi.run_on_mpi("ffn", 3, tokens=3, d_model=5)
    with pytest.raises(ValueError, match="layer must be one of"):
        mpi.run_on_mpi("conv", 2, tokens=3, d_model=4)
    with pytest.raises(ValueError, match="needs n_heads"):
        mpi.run_on_mpi("attention", 2, tokens=3, d_model=4)
