"""The recorded two-GPU runs as the lessons read them (``gemmlab.collectives.recorded``): the files
committed in benchmarks/, their labels, the NVLink fit, and the error when a file is missing."""
import numpy as np
import pytest

from gemmlab import course
from gemmlab.collectives import allreduce_command, recorded
from gemmlab.collectives.fit import fit_records


def test_the_sweep_is_complete_and_exact():
    records = recorded.sweep()
    sizes = sorted({r["size_bytes"] for r in records})
    assert sizes == allreduce_command.SWEEPS["nccl"]                          # 8 KiB .. 1 GiB
    assert {r["algorithm"] for r in records} == {"ring", "ring_stepwise", "ring_nvlink", "nccl",
                                                 "nccl_reduce_scatter", "nccl_allgather"}
    assert len(records) == 6 * len(sizes)
    assert all(r["verified"] and r["checks_passed"] and r["n_ranks"] == 2 for r in records)
    allreduce = recorded.sweep("allreduce")
    assert len(allreduce) == 4 * len(sizes)
    assert {r["collective"] for r in recorded.sweep("allgather")} == {"allgather"}
    # the busbw stored is nccl-tests' busbw of the stored time, with the collective's factor
    for r in records:
        factor = 1.0 if r["collective"] == "allreduce" else 0.5       # 2(N-1)/N, (N-1)/N at N=2
        assert r["busbw"] == pytest.approx(r["size_bytes"] / r["seconds"] / 1e9 * factor)


def test_label_names_the_gpus_nccl_and_date():
    record = {"n_ranks": 2, "gpu": "NVIDIA H200", "nccl_version": 22809,
              "date": "2026-11-30T18:46:21+00:00"}
    assert recorded.label(record) == "2 x NVIDIA H200, NCCL 2.28.9, 2026-11-30"
    assert recorded.label(recorded.sweep()[0]).startswith("2 x NVIDIA H200, NCCL ")


def test_the_link_fit_is_the_fit_of_the_recorded_curve():
    fit = recorded.link_fit("nccl")
    mine = [r for r in recorded.sweep() if r["algorithm"] == "nccl"]
    (expected,) = fit_records(mine)
    assert (fit.alpha, fit.beta, fit.model) == (expected.alpha, expected.beta, "ring")
    assert 1e-6 < fit.alpha < 1e-4 and 100 < fit.bandwidth < 900     # us per step, GB/s
    predicted = np.array([fit.predict(r["size_bytes"]) for r in mine])
    measured = np.array([r["seconds"] for r in mine])
    assert np.all(np.abs(predicted / measured - 1) < 0.5)
    with pytest.raises(ValueError, match="no recorded all-reduce named 'nccl_allgather'"):
        recorded.link_fit("nccl_allgather")


def test_layers_and_breakdown_are_there():
    reports = recorded.layers()
    assert {(r["layer"], r["dtype"]) for r in reports} == {
        (layer, dtype) for layer in ("ffn", "attention") for dtype in ("float32", "float16")}
    assert all(r["verified"] and r["n_ranks"] == 2 for r in reports)
    steps = recorded.breakdown()["attribution"]
    assert sum(steps["split_us_per_step"].values()) == pytest.approx(steps["stepwise_us_per_step"])


def test_a_missing_record_says_how_to_make_it(monkeypatch, tmp_path):
    (tmp_path / "benchmarks").mkdir()
    monkeypatch.setattr(course, "root", lambda: tmp_path)
    with pytest.raises(FileNotFoundError, match="gpu_multi.sh OUT_DIR` on a machine with 2 GPUs"):
        recorded.sweep()
