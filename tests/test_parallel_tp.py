"""``gemmlab tp`` (``gemmlab.parallel.tp``): the shared inputs and shards, the request checks
(before anything is launched), what the launcher is asked to start, the report, and the command's
one-line errors. The runs themselves: tests/test_parallel_tp_mpi_rank.py and test_parallel_tp_nccl_rank.py."""
import json
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

from gemmlab import cli
from gemmlab.collectives import jobs
from gemmlab.collectives.nccl import BackendUnavailable
from gemmlab.parallel import tp


def test_inputs_are_the_same_for_the_same_seed_and_shards_cover_the_weights():
    a, b = tp.make_inputs("ffn", 3, 8, seed=4), tp.make_inputs("ffn", 3, 8, seed=4)
    assert all(np.array_equal(a[k], b[k]) for k in ("X", "W_up", "W_down"))
    shards = tp.layer_shards("ffn", a, 4)
    assert np.array_equal(np.concatenate([s["W_up"] for s in shards], axis=1), a["W_up"])
    assert np.array_equal(np.concatenate([s["W_down"] for s in shards], axis=0), a["W_down"])
    attention = tp.make_inputs("attention", 3, 16, n_heads=8, n_kv_heads=2, bias=True)
    assert attention["Wk"].shape == (16, 4) and attention["b_o"].shape == (16,)
    P = sum(tp.local_partial("ffn", a["X"], s) for s in shards)
    full = tp.local_partial("ffn", a["X"], tp.layer_shards("ffn", a, 1)[0])
    np.testing.assert_allclose(P, full, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("request_, message", [
    (dict(backend="gloo", layer="ffn", n_ranks=2), "backend must be one of mpi, nccl"),
    (dict(backend="mpi", layer="conv", n_ranks=2), "layer must be one of ffn, attention"),
    (dict(backend="mpi", layer="ffn", n_ranks=0),
     r"number of ranks \(--np\) must be a whole number >= 1, got 0"),
    (dict(backend="mpi", layer="ffn", n_ranks=2, tokens=0), "tokens must be a whole number >= 1"),
    (dict(backend="mpi", layer="ffn", n_ranks=3, d_model=5),
     "F = 20 must be divisible by p = 3"),
    (dict(backend="mpi", layer="attention", n_ranks=4, d_model=12, n_heads=6),
     "n_heads = 6 must be divisible by p = 4"),
    (dict(backend="mpi", layer="ffn", n_ranks=2, dtype="float16"), "dtype: for the NCCL"),
    (dict(backend="mpi", layer="ffn", n_ranks=2, algos=["nccl"]), "algos: for the NCCL"),
    (dict(backend="nccl", layer="ffn", n_ranks=2, dtype="int8"), "dtype 'int8'"),
    (dict(backend="nccl", layer="ffn", n_ranks=2, algos=["centralized"]),
     "expected some of ring, ring_stepwise, ring_nvlink, nccl"),
    (dict(backend="nccl", layer="attention", n_ranks=2, causal=True), "MPI backend only"),
    (dict(backend="nccl", layer="ffn", n_ranks=2, repeats=0), "repeats must be a whole number"),
])
def test_bad_requests_fail_before_launching(monkeypatch, request_, message):
    monkeypatch.setattr(jobs, "mpirun", lambda *a, **k: pytest.fail("launched"))
    with pytest.raises(ValueError, match=message):
        tp.run_layer(**request_)


def _fake_job(monkeypatch, report, gpus=8):
    calls = []

    def fake_mpirun(n_ranks, program, timeout=300, env=None):
        calls.append({"n": n_ranks, "program": [str(a) for a in program]})
        return SimpleNamespace(stdout=f"{jobs.TAG} {json.dumps(report)}\n")

    monkeypatch.setattr(tp, "visible_gpus", lambda: gpus)
    monkeypatch.setattr(jobs, "mpirun", fake_mpirun)
    return calls


def test_the_launcher_is_asked_for_the_shape_and_the_backend(monkeypatch):
    report = {"verified": True, "layer": "attention"}
    calls = _fake_job(monkeypatch, report)
    assert tp.run_layer("nccl", "attention", 4, n_kv_heads=2, dtype="float16") == report
    (call,) = calls
    program = call["program"]
    assert call["n"] == 4 and program[:2] == ["-m", "gemmlab.parallel.tp_rank"]
    args = dict(zip(program[2::2], program[3::2], strict=False))
    assert args == {**args, "--backend": "nccl", "--layer": "attention", "--tokens": "2048",
                    "--d-model": "4096", "--heads": "32", "--kv-heads": "2",
                    "--dtype": "float16", "--algos": "ring,ring_stepwise,ring_nvlink,nccl"}
    tp.run_layer("mpi", "attention", 2, causal=True, bias=True)
    program = calls[-1]["program"]
    assert program[-2:] == ["--causal", "--bias"] and "--algos" not in program
    assert dict(zip(program[2::2], program[3::2], strict=False))["--tokens"] == "32"    # MPI's own default
    _fake_job(monkeypatch, report, gpus=1)
    with pytest.raises(BackendUnavailable, match="needs 2 GPUs, found 1"):
        tp.run_layer("nccl", "ffn", 2)


def test_reports_read_as_a_few_lines():
    mpi = {"backend": "mpi", "layer": "ffn", "n_ranks": 2, "tokens": 7, "d_model": 12,
           "max_error": 1e-7, "identical_to_simulation": True, "sent_bytes_per_rank": [336, 336],
           "seconds": 0.01, "verified": True}
    text = tp.format_report(mpi)
    assert "bit for bit" in text and "336 bytes" in text and "matches" in text
    nccl = {"backend": "nccl", "layer": "ffn", "n_ranks": 2, "gpu": "H200", "tokens": 4,
            "d_model": 8, "dtype": "float32", "gemm_seconds": 2e-3, "one_gpu_seconds": 4e-3,
            "payload_bytes": 2**20, "allreduce_seconds": {"ring": 1e-3},
            "comm_share": {"ring": 1 / 3}, "max_rel_error": {"ring": 0.0}, "verified": False}
    text = tp.format_report(nccl)
    assert "33.3% of the layer" in text and "1 MiB per GPU" in text and "MISMATCH" in text


def _gemmlab_tp(*argv):
    return subprocess.run([sys.executable, "-m", "gemmlab.cli", "tp", *argv],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("argv, message", [
    (["--np", "3", "--d-model", "5"], "F = 20 must be divisible by p = 3"),
    (["--np", "-1"], "number of ranks (--np) must be a whole number >= 1, got -1"),
    (["--backend", "mpi", "--dtype", "float16"], "dtype: for the NCCL backend only"),
])
def test_the_command_says_what_is_wrong_in_one_line(argv, message):
    done = _gemmlab_tp(*argv)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith("gemmlab tp: ") and message in done.stderr


def test_the_command_runs_a_layer_over_mpi(tmp_path):
    out = tmp_path / "ffn.json"
    done = _gemmlab_tp("--np", "2", "--tokens", "5", "--d-model", "8", "--json", str(out))
    assert done.returncode == 0, done.stderr
    assert "bit for bit the simulated layer" in done.stdout
    assert json.loads(out.read_text())["verified"]


def test_the_subcommand_is_registered():
    args = cli.build_parser().parse_args(["tp", "--backend", "nccl", "--np", "4", "--layer",
                                          "attention"])
    assert (args.backend, args.n_ranks, args.layer) == ("nccl", 4, "attention")
