"""The MPI collectives on real processes (mpiexec from the mpich wheel, started through the one
launcher), and ``gemmlab allreduce`` over MPI, always under a timeout."""
import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from gemmlab.collectives import allreduce_command, jobs

pytest.importorskip("mpi4py")

TIMEOUT = 60

# Runs on every rank: random float32 inputs at a length that does not divide by the number of
# ranks; the MPI ring must give the simulated ring's bits, and the MPI reduce-scatter and
# all-gather the chunks and concatenation np.array_split defines.
PROGRAM = textwrap.dedent("""
    import sys
    from pathlib import Path

    import numpy as np
    from mpi4py import MPI
    import gemmlab.collectives as C
    from gemmlab.collectives import mpi_allreduce

    comm = MPI.COMM_WORLD
    n, rank = comm.Get_size(), comm.Get_rank()
    everyone = [np.random.default_rng([11, r]).standard_normal(1001).astype(np.float32)
                for r in range(n)]
    mine = everyone[rank]
    simulated = C.ring_allreduce(everyone).outputs[rank]
    assert np.array_equal(mpi_allreduce.ring_allreduce(comm, mine), simulated), "ring differs"
    exact = np.sum([e.astype(np.float64) for e in everyone], axis=0)
    for name in ("centralized", "mpi"):
        got = mpi_allreduce.ALGORITHMS[name](comm, mine)
        assert np.allclose(got, exact, rtol=1e-5, atol=1e-5), name
    part = mpi_allreduce.ring_reduce_scatter(comm, mine)
    assert np.allclose(part, np.array_split(exact, n)[rank], rtol=1e-5, atol=1e-5)
    rows = [e[:21].reshape(7, 3) for e in everyone]          # 7 rows: unequal row blocks
    block = mpi_allreduce.ring_reduce_scatter(comm, rows[rank])
    assert np.array_equal(block, C.ring_reduce_scatter(rows).outputs[rank]), "row blocks differ"
    pieces = [np.arange(r + 2, dtype=np.int64) * (r + 1) for r in range(n)]
    assert np.array_equal(mpi_allreduce.ring_allgather(comm, pieces[rank]), np.concatenate(pieces))
    assert np.array_equal(mpi_allreduce.ring_allreduce(comm, mine), simulated), "not repeatable"
    Path(sys.argv[1], f"rank{rank}.ok").write_text("ok")
""")


@pytest.mark.parametrize("n", [2, 3, 4])
def test_mpi_ring_gives_the_simulated_bits(tmp_path, n):
    script = tmp_path / "program.py"
    script.write_text(PROGRAM)
    jobs.mpirun(n, [script, tmp_path], timeout=TIMEOUT)
    assert sorted(p.name for p in tmp_path.glob("*.ok")) == [f"rank{r}.ok" for r in range(n)]


@pytest.mark.parametrize("n", [2, 4])
def test_cli_checks_every_rank_and_prints_bandwidths(tmp_path, n):
    out = tmp_path / "result.json"
    done = subprocess.run(
        [sys.executable, "-m", "gemmlab.cli", "allreduce", "--np", str(n),
         "--size", "4KiB,12344", "--repeats", "2", "--timeout", str(TIMEOUT), "--json", str(out)],
        capture_output=True, text=True, timeout=TIMEOUT + 30)
    assert done.returncode == 0, done.stderr + done.stdout
    assert "busbw" in done.stdout and "WRONG" not in done.stdout
    records = json.loads(out.read_text())
    assert {(r["algorithm"], r["size_bytes"]) for r in records} == {
        (a, s) for a in ("ring", "centralized", "mpi") for s in (4096, 12344)}
    for r in records:
        assert r["verified"] and r["n_ranks"] == n and len(r["times"]) == 2
        assert r["seconds"] == pytest.approx(np.median(r["times"]))
        assert r["busbw"] == pytest.approx(r["algbw"] * 2 * (n - 1) / n)
        assert r["algbw"] == pytest.approx(r["size_bytes"] / r["seconds"] / 1e9)


def test_sizes_and_requests_are_checked():
    assert allreduce_command.parse_size("64MiB") == 64 * 2**20
    assert allreduce_command.parse_size("1.5 KiB") == 1536
    assert allreduce_command.parse_size("4MB") == 4_000_000
    assert allreduce_command.parse_size(4096) == 4096
    with pytest.raises(ValueError, match="64MiB"):
        allreduce_command.parse_size("64 parsecs")
    with pytest.raises(ValueError, match="multiple of 4"):
        allreduce_command.run_allreduce(2, ["4098"])
    with pytest.raises(ValueError, match="ring, centralized, mpi"):
        allreduce_command.run_allreduce(2, ["4KiB"], algos=["gossip"])
