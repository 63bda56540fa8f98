"""The CPU benchmark: validates before timing, reports medians, and runs from the command line."""
import json

import numpy as np
import pytest

from gemmlab import cli
from gemmlab.kernels import cpubench


def test_run_reports_every_version_at_every_size():
    lines = []
    results = cpubench.run(sizes=(9, 17), repeats=3, progress=lambda *a, **k: lines.append(a))
    assert [(r["kernel"], r["n"]) for r in results] == [
        (name, n) for n in (9, 17) for name in cpubench.versions()]
    for r in results:
        assert r["min_ms"] <= r["ms"] <= r["max_ms"]
        assert r["gflops"] == pytest.approx(2 * r["n"] ** 3 / (r["ms"] * 1e-3) / 1e9)
        assert r["max_rel_err"] < 1e-3
    assert len(lines) == 2 * len(results)          # a line when a version starts and when it ends


def test_a_wrong_kernel_is_refused_before_it_is_timed(monkeypatch):
    broken = dict(cpubench.versions())
    broken["off_by_one"] = (lambda A, B: A @ B + np.float32(1), None)
    monkeypatch.setattr(cpubench, "versions", lambda: broken)
    with pytest.raises(RuntimeError, match="off_by_one gives a wrong"):
        cpubench.run(sizes=(8,), repeats=1, progress=None)


def test_bad_sizes_are_rejected():
    with pytest.raises(ValueError, match="sizes"):
        cpubench.run(sizes=(0,), progress=None)


def test_the_command_line_writes_results_and_the_machine(tmp_path, capsys):
    out = tmp_path / "cpu.json"
    assert cli.main(["bench", "--cpu", "--sizes", "11", "--out", str(out)]) == 0
    record = json.loads(out.read_text())
    assert record["machine"]["cpu"] and record["machine"]["numba"]
    assert {r["kernel"] for r in record["results"]} == set(cpubench.versions())
    assert "reordered_ikj" in capsys.readouterr().out
