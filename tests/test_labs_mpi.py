"""gl.labs.run_mpi: a student's all-reduce, sent as the source of its notebook cell, run on 2 to 4
real MPI processes beside the course's ring and MPI_Allreduce (mpiexec from the mpich wheel,
always under MPIEXEC_TIMEOUT); and the MPI comm the student's function is given there."""
import linecache
import shutil
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from gemmlab.collectives import jobs
from gemmlab.labs import run_mpi
from gemmlab.labs.solutions import solution
REFERENCE = solution("07.lab_ring", name="ring_allreduce")

pytest.importorskip("mpi4py")
if shutil.which("mpiexec") is None and not (Path(sys.executable).parent / "mpiexec").exists():
    pytest.skip("no mpiexec next to this Python or on PATH (pip install mpich)",
                allow_module_level=True)

TIMEOUT = 60

CELL = '''
def my_ring(comm, x):
    n, r = comm.size, comm.rank
    chunks = [c.copy() for c in np.array_split(x, n)]
    right, left = (r + 1) % n, (r - 1) % n
    for s in range(n - 1):
        chunks[(r - s - 2) % n] += comm.sendrecv(chunks[(r - s - 1) % n], right, left)
    for s in range(n - 1):
        chunks[(r - s - 1) % n] = comm.sendrecv(chunks[(r - s) % n], right, left)
    return np.concatenate(chunks)

check("07.lab_ring", my_ring)
'''


def _from_a_cell(source, name, cell_number):
    """Define ``name`` as IPython would from a notebook cell: compiled under a file name that
    linecache knows (no file on disk)."""
    filename = f"<ipython-input-{cell_number}-5f2a9c0d1e3b>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"__name__": "__main__", "np": np, "check": lambda *args: None}
    exec(compile(source, filename, "exec"), namespace)
    return namespace[name]


@pytest.mark.parametrize("n", [2, 3, 4])
def test_a_cell_function_runs_on_mpi_beside_mpi_allreduce(n, capsys):
    fn = _from_a_cell(CELL, "my_ring", n)
    records = run_mpi(fn, np=n, size="64KiB", repeats=2, timeout=TIMEOUT)
    out = capsys.readouterr().out
    assert [r["algorithm"] for r in records] == ["yours", "ring", "mpi"]
    for r in records:
        assert r["verified"] and r["n_ranks"] == n and r["size_bytes"] == 64 * 2**10
        assert r["busbw"] == pytest.approx(r["algbw"] * 2 * (n - 1) / n)
    assert "busbw GB/s" in out and "exact sum on every rank" in out and "WRONG" not in out
    assert f"my_ring on {n} processes, 64 KiB per rank:" in out


def test_the_solutions_ring_travels_as_its_cell(capsys):
    records = run_mpi(REFERENCE, np=2, size="12344", repeats=1, timeout=TIMEOUT)
    assert all(r["verified"] for r in records)


def test_a_deadlock_is_reported_from_the_simulated_rehearsal_without_launching(capsys):
    stuck = _from_a_cell("def stuck(comm, x):\n"
                         "    comm.send((comm.rank + 1) % comm.size, x)\n"
                         "    return comm.recv((comm.rank - 1) % comm.size)\n", "stuck", 90)
    assert run_mpi(stuck, np=3, size="4KiB", timeout=TIMEOUT) is None
    out = capsys.readouterr().out
    assert out.startswith("run_mpi: not launched; on 3 simulated ranks: deadlock: rank 0 waits in "
                          "send to 1")


def test_an_unanswered_or_wrong_function_is_not_launched(capsys):
    assert run_mpi(lambda comm, x: ..., np=2, size="4KiB") is None
    assert "returns nothing yet" in capsys.readouterr().out
    assert run_mpi(lambda comm, x: x, np=2, size="4KiB") is None
    assert "rank 0 does not return the sum" in capsys.readouterr().out
    with pytest.raises(ValueError, match="multiple of 4"):
        run_mpi(REFERENCE, np=2, size="4098")
    with pytest.raises(TypeError, match="all-reduce function"):
        run_mpi("ring", np=2)


# Every rank: the comm a student's function gets under MPI behaves as the simulated one.
PROGRAM = textwrap.dedent("""
    import sys
    from pathlib import Path

    import numpy as np
    from mpi4py import MPI
    from gemmlab.labs.run_mpi_rank import MPIRankComm

    comm = MPIRankComm(MPI.COMM_WORLD)
    n, r = comm.size, comm.rank
    right, left = (r + 1) % n, (r - 1) % n
    got = comm.sendrecv(np.arange(5, dtype=np.float32) + r, right, left)     # raw bytes
    assert got.dtype == np.float32 and np.array_equal(got, np.arange(5) + left)
    block = comm.sendrecv(np.full((2, 3), r, dtype=np.int64), right, left)   # pickled, 2-D
    assert block.shape == (2, 3) and (block == left).all()
    if r % 2 == 0:
        comm.send(right, np.array([r], dtype=np.int32))
        assert comm.recv(left)[0] == left
    else:
        assert comm.recv(left)[0] == left
        comm.send(right, np.array([r], dtype=np.int32))
    assert np.array_equal(comm.all_reduce(np.ones(4) * r), np.ones(4) * n * (n - 1) / 2)
    assert np.array_equal(comm.all_gather(np.array([[r]]), axis=1), [list(range(n))])
    Path(sys.argv[1], f"rank{r}.ok").write_text("ok")
""")


def test_the_mpi_comm_sends_receives_and_reduces(tmp_path):
    script = tmp_path / "program.py"
    script.write_text(PROGRAM)
    jobs.mpirun(4, [script, tmp_path], timeout=TIMEOUT)
    assert sorted(p.name for p in tmp_path.glob("*.ok")) == [f"rank{r}.ok" for r in range(4)]
