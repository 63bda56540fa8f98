"""Megatron's FFN and attention on real MPI processes, one per rank (``gemmlab.parallel.tp_mpi_rank``,
started by ``gemmlab.parallel.tp.run_layer`` through the one launcher): every rank's Y against the
float64 reference and, bit for bit, the single-process simulation; always under a timeout."""
import pytest

from gemmlab.parallel import tp

pytest.importorskip("mpi4py")

TIMEOUT = 60


@pytest.mark.parametrize("n_ranks", [2, 4])
def test_ffn_over_mpi_matches_the_reference_and_the_simulation(n_ranks):
    report = tp.run_layer("mpi", "ffn", n_ranks, tokens=7, d_model=12, bias=True, seed=n_ranks,
                          timeout=TIMEOUT)
    assert report["n_ranks"] == n_ranks and report["backend"] == "mpi"
    assert report["verified"] and report["max_error"] < 1e-4
    assert report["identical_to_simulation"]
    S = 7 * 12 * 4
    assert report["sent_bytes_per_rank"] == [2 * (n_ranks - 1) * S // n_ranks] * n_ranks


@pytest.mark.parametrize("n_kv_heads,causal", [(None, True), (2, False)])
def test_attention_over_mpi_matches_the_reference_and_the_simulation(n_kv_heads, causal):
    report = tp.run_layer("mpi", "attention", 4, tokens=9, d_model=16, n_heads=8,
                          n_kv_heads=n_kv_heads, causal=causal, bias=True, timeout=TIMEOUT)
    assert report["verified"] and report["identical_to_simulation"]
