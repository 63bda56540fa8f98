"""benchmarks/ring_breakdown.py, the parent's side: how one step's time is split from the records,
NCCL's start-up lines kept, the table (the ranks' side needs GPUs: benchmarks/gpu_multi.sh)."""
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("ring_breakdown",
                                              ROOT / "benchmarks" / "ring_breakdown.py")
breakdown = importlib.util.module_from_spec(spec)
spec.loader.exec_module(breakdown)


def _variant(name, gpu_us, size=8192):
    return {"kind": "variant", "name": name, "size_bytes": size, "n_ranks": 2, "steps": 2,
            "gpu_us": gpu_us, "host_us": gpu_us / 2, "exact": True}


def test_one_step_is_split_by_leaving_parts_out():
    records = [_variant(breakdown.STEPWISE, 300), _variant(breakdown.PREPARED, 80),
               _variant(breakdown.GRAPH, 20), _variant(breakdown.TRANSFERS, 16),
               _variant(breakdown.GRAPH, 999, size=2**20),
               {"kind": "component", "name": "one addition", "size_bytes": 8192,
                "host_us": 9.0, "gpu_us": 12.0}]
    split = breakdown.attribution(records, 8192)
    assert split["stepwise_us_per_step"] == 150 and split["graph_us_per_step"] == 10
    assert list(split["split_us_per_step"].values()) == [110, 30, 2, 8]
    assert split["parts_alone"] == {"one addition": {"host_us": 9.0, "gpu_us": 12.0}}
    assert breakdown.attribution(records[:2], 8192)["incomplete"] == sorted(
        [breakdown.STEPWISE, breakdown.PREPARED])


def test_nccl_start_up_lines_are_kept(tmp_path):
    (tmp_path / "nccl_debug.vm.1").write_text("x NCCL INFO NCCL version 2.28.9\nnoise\n"
                                              "x NCCL INFO 24 coll channels, 32 p2p channels\n")
    assert breakdown.nccl_lines(tmp_path) == ["x NCCL INFO NCCL version 2.28.9",
                                             "x NCCL INFO 24 coll channels, 32 p2p channels"]
    assert breakdown.nccl_lines(tmp_path / "nothing") == []


def test_the_table_shows_errors_and_busbw(capsys):
    broken = {"kind": "variant", "name": "CUDA graph, whole chunks", "size_bytes": 8192,
              "error": "RuntimeError: capture"}
    breakdown.print_table([_variant(breakdown.GRAPH, 1e6 / 1024, size=2**30), broken])
    out = capsys.readouterr().out
    assert "ERROR RuntimeError: capture" in out
    assert f"{2**30 / (1e6 / 1024 * 1e-6) / 1e9:8.1f}" in out          # busbw at N = 2
    with pytest.raises(KeyError):
        breakdown.print_table([{"kind": "variant"}])
