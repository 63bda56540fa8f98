"""The ring collectives over NCCL: the rank's side (``gemmlab.collectives.nccl``) and the parent's
(``gemmlab allreduce --backend nccl``, ``collectives.allreduce_command``).

Everywhere: the launcher's argument checks, NVLS setting and records; the error without CuPy; the
sweep summary. (The ring itself, over any transport: tests/test_collectives_ring_steps.py.)

On the gpu backend with CuPy: the same ring code on CuPy arrays of one GPU, a one-rank NCCL
communicator (our ring, NCCL's collectives, a send to itself) and the CLI at N = 1. With N GPUs,
the same at N = 2, 4, 8; with fewer, those tests skip ("needs N GPUs, found M").
"""
import json
import os
import sys
import textwrap
from types import SimpleNamespace

import numpy as np
import pytest
from multirank import GPUS, QueueRing, needs_gpus, run_on_ranks, random_buffers as _random

import gemmlab.collectives as C
from gemmlab import cli
from gemmlab.collectives import allreduce_command, jobs, nccl, ring_steps

# --- NCCL's own collectives refuse what NCCL cannot do -----------------------------------------

def test_nccl_reduce_scatter_needs_rows_that_divide_by_the_ranks():
    two_ranks = SimpleNamespace(rank=0, size=2)
    with pytest.raises(ValueError, match="must divide by the 2 ranks"):
        nccl.nccl_reduce_scatter(two_ranks, np.zeros(5, np.float32))


# --- launchers and CLI without a GPU ------------------------------------------------------------

def _cli_args(*argv):
    parser = cli.build_parser()
    return parser.parse_args(["allreduce", *argv])


def test_sweep_and_sizes():
    assert allreduce_command.requested_sizes(_cli_args("--backend", "nccl", "--sweep")) == [
        2**k for k in range(13, 31)]                                  # 8 KiB .. 1 GiB
    assert allreduce_command.requested_sizes(_cli_args("--sweep"))[-1] == 64 * 2**20
    assert allreduce_command.requested_sizes(_cli_args("--backend", "nccl")) == ["64MiB"]
    with pytest.raises(ValueError, match="--size 1MiB and --sweep both given"):
        allreduce_command.requested_sizes(_cli_args("--backend", "nccl", "--sweep", "--size", "1MiB"))


def test_cli_argument_errors_come_before_any_gpu_is_needed(capsys):
    # a user's bad input is a one-line error with exit status 2, not a traceback
    assert cli.main(["allreduce", "--backend", "nccl", "--algo", "centralized",
                     "--size", "4KiB"]) == 2
    assert "expected some of ring, ring_stepwise, ring_nvlink, nccl" in capsys.readouterr().err
    assert cli.main(["allreduce", "--backend", "nccl", "--size", "4098"]) == 2
    assert "multiple of 4" in capsys.readouterr().err
    with pytest.raises(ValueError, match="iters must be a whole number >= 1, got 0"):
        allreduce_command.run_allreduce_nccl(2, ["4KiB"], iters=0)
    with pytest.raises(ValueError, match="equal block, so each size must be a multiple of 16"):
        allreduce_command.run_allreduce_nccl(4, ["4KiB", "4100"], algos=["ring", "nccl_allgather"])
    with pytest.raises(SystemExit):                                   # argparse: not a backend
        cli.main(["allreduce", "--backend", "gloo"])


def test_too_few_gpus_is_a_clear_error():
    with pytest.raises(nccl.BackendUnavailable, match="--np 4 needs 4 GPUs, found 1"):
        nccl.check_gpu_count(4, 1)
    nccl.check_gpu_count(2, 8)
    with pytest.raises(ValueError, match=r"n_ranks \(the number of GPUs\) must be a whole number"):
        nccl.check_gpu_count(0, 8)


def test_without_cupy_the_backend_says_what_it_needs(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "cupy", None)                    # `import cupy` now fails
    with pytest.raises(nccl.BackendUnavailable, match="needs CuPy with NCCL.*pip install"):
        nccl.require_cupy()
    assert cli.main(["allreduce", "--backend", "nccl", "--np", "2", "--size", "1MiB"]) == 2
    err = capsys.readouterr().err
    assert "--backend nccl" in err and "CuPy" in err and "--backend mpi" in err


def _fake_job(monkeypatch, lines, gpus=8):
    """Replace the GPU count and mpiexec; return the list the launcher's calls land in."""
    calls = []

    def fake_mpirun(n_ranks, program, timeout=300, env=None):
        calls.append({"n": n_ranks, "program": [str(a) for a in program], "env": env})
        return SimpleNamespace(stdout="\n".join(lines) + "\n")

    monkeypatch.setattr(allreduce_command, "visible_gpus", lambda: gpus)
    monkeypatch.setattr(jobs, "mpirun", fake_mpirun)
    return calls


def _record(algorithm, collective="allreduce", checks=None, size=2**20, seconds=1e-4):
    return {"algorithm": algorithm, "collective": collective, "n_ranks": 4, "size_bytes": size,
            "dtype": "float32", "seconds": seconds, "times": [seconds], "verified": True,
            "checks": checks or {}, "checks_passed": True, "sent_bytes_per_rank": None}


def test_launcher_reads_the_records_and_their_bandwidths(monkeypatch, tmp_path):
    lines = [jobs.TAG + " " + json.dumps(r) for r in (
        _record("ring", checks={"reduce-scatter": True, "all-gather": None}), _record("nccl"),
        _record("nccl_allgather", "allgather"))]
    calls = _fake_job(monkeypatch, lines)
    out = tmp_path / "r.json"
    assert cli.main(["allreduce", "--backend", "nccl", "--np", "4", "--size", "1MiB",
                     "--algo", "ring,nccl,nccl_allgather", "--json", str(out)]) == 0
    (call,) = calls
    assert call["n"] == 4
    assert call["program"][:2] == ["-m", "gemmlab.collectives.allreduce_nccl_rank"]
    records = json.loads(out.read_text())
    assert [r["algorithm"] for r in records] == ["ring", "nccl", "nccl_allgather"]
    assert records[0]["busbw"] == pytest.approx(2**20 / 1e-4 / 1e9 * 2 * 3 / 4)
    assert records[2]["busbw"] == pytest.approx(2**20 / 1e-4 / 1e9 * 3 / 4)   # (N-1)/N
    assert "NCCL's not run at 1048576 B" in allreduce_command.report_checks(records)
    _fake_job(monkeypatch, lines, gpus=4)
    with pytest.raises(nccl.BackendUnavailable, match="needs 8 GPUs, found 4"):
        allreduce_command.run_allreduce_nccl(8, ["1MiB"])
    _fake_job(monkeypatch, lines[:1])
    with pytest.raises(RuntimeError, match="expected 4 record"):
        allreduce_command.run_allreduce_nccl(4, ["1MiB"])


def test_a_wrong_reduce_scatter_fails_the_cli(monkeypatch, capsys):
    line = jobs.TAG + " " + json.dumps(
        {"algorithm": "ring", "n_ranks": 2, "size_bytes": 4096, "dtype": "float32",
         "seconds": 1e-5, "times": [1e-5], "verified": True,
         "checks": {"reduce-scatter": False, "all-gather": True}, "checks_passed": False,
         "sent_bytes_per_rank": [4096, 4096]})
    _fake_job(monkeypatch, [line])
    assert cli.main(["allreduce", "--backend", "nccl", "--np", "2", "--algo", "ring",
                     "--size", "4KiB"]) == 1
    assert "WRONG: ring reduce-scatter at 4096 B" in capsys.readouterr().out


# --- on GPUs -----------------------------------------------------------------------------------

@needs_gpus(1)
@pytest.mark.parametrize("n", [1, 2, 4])
def test_ring_code_on_cupy_arrays_of_one_gpu(n):
    import cupy
    everyone = _random(n, 1001, seed=n)
    outputs = QueueRing(n).run(lambda t: ring_steps.ring_allreduce(t, cupy.asarray(everyone[t.rank])))
    cupy.cuda.runtime.deviceSynchronize()
    for got, expected in zip(outputs, C.ring_allreduce(everyone).outputs, strict=True):
        np.testing.assert_array_equal(got.get(), expected)
    matrices = [e[:21].reshape(7, 3) for e in everyone]
    blocks = QueueRing(n).run(lambda t: ring_steps.ring_reduce_scatter(t, cupy.asarray(matrices[t.rank])))
    for got, expected in zip(blocks, C.ring_reduce_scatter(matrices).outputs, strict=True):
        np.testing.assert_array_equal(got.get(), expected)


@pytest.fixture(scope="module")
def one_rank():
    transport = nccl.connect()
    yield transport
    transport.close()


@needs_gpus(1)
def test_one_rank_nccl_communicator(one_rank):
    import cupy
    assert os.environ["NCCL_NVLS_ENABLE"] == "0"
    x = cupy.asarray(np.random.default_rng(3).integers(-1000, 1000, (257, 3)).astype(np.float32))
    for algorithm in (ring_steps.ring_allreduce, nccl.nccl_allreduce):
        assert cupy.array_equal(algorithm(one_rank, x), x)      # the sum over one rank is x
    assert cupy.array_equal(ring_steps.ring_reduce_scatter(one_rank, x), x)
    assert cupy.array_equal(nccl.nccl_reduce_scatter(one_rank, x), x)
    assert cupy.array_equal(ring_steps.ring_allgather(one_rank, x), x)
    assert cupy.array_equal(nccl.nccl_allgather(one_rank, x), x)
    received = cupy.full(x.size, -1.0, dtype=cupy.float32)
    one_rank.sendrecv(x.reshape(-1), 0, received, 0)             # ncclSend/ncclRecv to itself
    assert cupy.array_equal(received, x.reshape(-1))
    with pytest.raises(TypeError, match="NCCL has no type for complex64"):
        one_rank.allreduce(x.astype(cupy.complex64), x.astype(cupy.complex64))


@needs_gpus(1)
def test_cli_on_one_gpu(tmp_path):
    out = tmp_path / "np1.json"
    assert cli.main(["allreduce", "--backend", "nccl", "--np", "1", "--size", "8KiB,4100",
                     "--repeats", "2", "--iters", "2", "--json", str(out)]) == 0
    records = json.loads(out.read_text())
    assert {(r["algorithm"], r["size_bytes"]) for r in records} == {
        (a, s) for a in ("ring", "ring_stepwise", "ring_nvlink", "nccl") for s in (8192, 4100)}
    assert all(r["verified"] and r["checks_passed"] and r["busbw"] == 0 for r in records)
    assert all(r["nccl_version"] > 0 and r["gpu"] for r in records)


@pytest.mark.skipif(not 0 < GPUS < 2, reason="needs a machine with exactly one GPU")
def test_cli_refuses_more_ranks_than_gpus(capsys):
    assert cli.main(["allreduce", "--backend", "nccl", "--np", "2", "--size", "4KiB"]) == 2
    assert f"needs 2 GPUs, found {GPUS}" in capsys.readouterr().err


BITS_PROGRAM = textwrap.dedent("""
    import os, sys
    from pathlib import Path
    import cupy
    import numpy as np
    from mpi4py import MPI
    import gemmlab.collectives as C
    from gemmlab.collectives import nccl

    assert os.environ["NCCL_NVLS_ENABLE"] == "0", "the launcher did not turn NVLS off"
    comm = MPI.COMM_WORLD
    t = nccl.connect(comm)
    n, rank = comm.Get_size(), comm.Get_rank()
    everyone = [np.random.default_rng([5, r]).standard_normal(1001).astype(np.float32)
                for r in range(n)]
    mine = cupy.asarray(everyone[rank])
    ours = ring_steps.ring_allreduce(t, mine).get()
    assert np.array_equal(ours, C.ring_allreduce(everyone).outputs[rank]), "ring differs"
    exact = np.sum([e.astype(np.float64) for e in everyone], axis=0)
    assert np.allclose(nccl.nccl_allreduce(t, mine).get(), exact, rtol=1e-5, atol=1e-5)
    rows = [e[:21].reshape(7, 3) for e in everyone]
    block = ring_steps.ring_reduce_scatter(t, cupy.asarray(rows[rank])).get()
    assert np.array_equal(block, C.ring_reduce_scatter(rows).outputs[rank]), "blocks differ"
    pieces = [np.arange(r + 2, dtype=np.int64) * (r + 1) for r in range(n)]
    got = ring_steps.ring_allgather(t, cupy.asarray(pieces[rank]), [len(p) for p in pieces]).get()
    assert np.array_equal(got, np.concatenate(pieces)), "all-gather differs"
    t.close()
    Path(sys.argv[1], f"rank{rank}.ok").write_text("ok")
""")


@pytest.mark.parametrize("n", [pytest.param(n, marks=needs_gpus(n)) for n in (2, 4, 8)])
def test_ring_over_nccl_gives_the_simulated_bits(tmp_path, n):
    run_on_ranks(tmp_path, BITS_PROGRAM, n)


@pytest.mark.parametrize("n", [pytest.param(n, marks=needs_gpus(n)) for n in (2, 4, 8)])
def test_cli_on_n_gpus(n):
    records = allreduce_command.run_allreduce_nccl(n, ["8KiB", "4100"], repeats=2, iters=2, timeout=300)
    assert all(r["verified"] and r["checks_passed"] for r in records)
    for r in records:
        if r["algorithm"].startswith("ring"):
            plan = ring_steps.RingPlan.split(n, r["size_bytes"] // 4, 4)
            assert r["sent_bytes_per_rank"] == plan.result("ring", [None] * n).sent_bytes.tolist()
    blocks = allreduce_command.run_allreduce_nccl(n, ["64KiB"], ["nccl_reduce_scatter", "nccl_allgather"],
                                       repeats=2, iters=2, timeout=300)
    assert [r["collective"] for r in blocks] == ["reducescatter", "allgather"]
    assert all(r["verified"] for r in blocks)


def test_sweep_summary_quotes_the_headline_ratio_and_the_fits():
    alpha = {"ring": 30e-6, "ring_nvlink": 5e-6, "nccl": 10e-6}
    beta = {"ring": 1 / 200e9, "ring_nvlink": 1 / 340e9, "nccl": 1 / 360e9}
    records = []
    for name in ("ring", "ring_nvlink", "nccl"):
        for size in (2**13, 2**20, 2**28, 2**30):
            seconds = C.allreduce_cost("ring", 8, size).time(alpha[name], beta[name])
            records.append({"algorithm": name, "n_ranks": 8, "size_bytes": size,
                            "seconds": seconds, "busbw": C.busbw("allreduce", 8, size, seconds),
                            "verified": True, "checks_passed": True})
    summary = allreduce_command.sweep_summary(records)
    at = summary["busbw_at_headline"]
    assert summary["ring_algorithm"] == "ring_nvlink"         # the first of OUR_RINGS swept
    assert summary["ring_fraction_of_nccl"] == pytest.approx(at["ring_nvlink"] / at["nccl"])
    assert 0.9 < summary["ring_fraction_of_nccl"] < 1 and summary["all_verified"]
    fits = {f["algorithm"]: f for f in summary["fits"]}
    assert fits["nccl"]["alpha_us"] == pytest.approx(10, rel=1e-3)
    assert fits["ring"]["bandwidth_GBps"] == pytest.approx(200, rel=1e-3)
    assert fits["ring_nvlink"]["alpha_us"] == pytest.approx(5, rel=1e-3)
    bw = {(r["algorithm"], r["size_bytes"]): r["busbw"] for r in records}
    for ring in ("ring", "ring_nvlink"):
        ratios = [bw[ring, s] / bw["nccl", s] for s in (2**28, 2**30)]    # from 256 MiB up
        assert summary["lowest_fraction_from_headline"][ring] == pytest.approx(min(ratios))
    assert summary["ring_lowest_fraction_from_headline"] == pytest.approx(
        summary["lowest_fraction_from_headline"]["ring_nvlink"])
    assert summary["fraction_of_nccl_at_headline"] == pytest.approx(
        {"ring": at["ring"] / at["nccl"], "ring_nvlink": summary["ring_fraction_of_nccl"],
         "nccl": 1.0})
    graph_only = allreduce_command.sweep_summary([r for r in records if r["algorithm"] != "ring_nvlink"])
    assert graph_only["ring_algorithm"] == "ring"
    assert 0.5 < graph_only["ring_fraction_of_nccl"] < 0.6
    records[0]["checks_passed"] = False
    assert not allreduce_command.sweep_summary(records)["all_verified"]
    with pytest.raises(ValueError, match="one number of ranks"):
        allreduce_command.sweep_summary(records + [{**records[0], "n_ranks": 4}])
