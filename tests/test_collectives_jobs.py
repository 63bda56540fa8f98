"""The one launcher (``gemmlab.collectives.jobs``): N ranks over MPI (mpiexec from the mpich
wheel), the records they emit read back, NVLink multicast off in every rank, a deadlock ended by
the timeout, a rank alone in its world stopped."""
import json
from types import SimpleNamespace

import pytest

from gemmlab.collectives import jobs

pytest.importorskip("mpi4py")

TIMEOUT = 60

# Every rank emits one record (with comm: rank 0 only, so one record in all) and one of its own.
PROGRAM = """
import os
from gemmlab.collectives import jobs
comm = jobs.world()
jobs.emit({"rank": comm.Get_rank(), "size": comm.Get_size(),
           "nvls": os.environ.get("NCCL_NVLS_ENABLE")})
jobs.emit({"from rank 0 only": True, "extra": os.environ.get("EXTRA")}, comm)
print("an ordinary line the parser must skip")
"""


def test_run_collects_every_ranks_records_with_nvls_off(tmp_path):
    script = tmp_path / "program.py"
    script.write_text(PROGRAM)
    records = jobs.run(3, [script], timeout=TIMEOUT, env={"EXTRA": "yes"}, expected=4)
    ranks = [r for r in records if "rank" in r]
    assert sorted(r["rank"] for r in ranks) == [0, 1, 2]
    assert all(r["size"] == 3 and r["nvls"] == "0" for r in ranks)
    assert [r for r in records if "rank" not in r] == [{"from rank 0 only": True, "extra": "yes"}]
    with pytest.raises(RuntimeError, match="expected 2 record"):
        jobs.run(3, [script], timeout=TIMEOUT, expected=2)


def test_parse_reads_tagged_records_only():
    # the third record follows another rank's print whose newline came later (seen in a run)
    text = "\n".join(["hello", f"{jobs.TAG} {json.dumps({'a': 1})}", f"{jobs.TAG}X {{}}",
                      f"{jobs.TAG} {json.dumps([2, 3])}",
                      f"a line the parser must skip{jobs.TAG} {json.dumps({'b': 4})}", ""])
    assert jobs.parse(text) == [{"a": 1}, [2, 3], {"b": 4}]
    with pytest.raises(RuntimeError, match="(?s)expected 4 record.*got 3.*hello"):
        jobs.parse(text, expected=4)


def test_emit_prints_one_tagged_line(capsys):
    rank1 = SimpleNamespace(Get_rank=lambda: 1)
    jobs.emit({"x": 1.5}, rank1)
    assert capsys.readouterr().out == ""
    jobs.emit({"x": 1.5})
    assert jobs.parse(capsys.readouterr().out, expected=1) == [{"x": 1.5}]


def test_a_failing_rank_ends_the_job_with_its_error(tmp_path):
    script = tmp_path / "fail.py"
    script.write_text("from mpi4py import MPI\n"
                      "if MPI.COMM_WORLD.Get_rank() == 1:\n"
                      "    raise ValueError('rank one is broken')\n"
                      "MPI.COMM_WORLD.Barrier()\n")
    with pytest.raises(RuntimeError, match="rank one is broken"):
        jobs.mpirun(2, [script], timeout=TIMEOUT)


def test_a_deadlock_ends_in_an_error_not_a_hang(tmp_path):
    script = tmp_path / "deadlock.py"
    script.write_text("from mpi4py import MPI\nimport numpy as np\n"
                      "buf = np.zeros(1)\nMPI.COMM_WORLD.Recv(buf, source=MPI.ANY_SOURCE)\n")
    # MPICH says "TIMED OUT", Open MPI "time limit ... has been reached"; MPICH sometimes exits 0
    # after its timeout kill, which the launcher must still report as the time limit: the error
    # names that limit as the cause, however long a loaded machine took to get there
    for _ in range(3):
        with pytest.raises(RuntimeError, match="TIMED OUT|time limit"):
            jobs.mpirun(2, [script], timeout=2)


def test_bad_rank_counts_are_refused_before_launching():
    for bad in (0, -1, 2.5, True, "2"):
        with pytest.raises(ValueError, match=r"\(the number of processes\) must be a whole number"):
            jobs.mpirun(bad, ["x.py"])


def test_a_rank_alone_in_its_world_stops_with_the_reason(monkeypatch):
    # what mpiexec and mpi4py from different MPI libraries look like to a rank
    monkeypatch.setenv(jobs.WORLD_SIZE_VAR, "4")
    with pytest.raises(SystemExit, match="different MPI libraries"):
        jobs.world()
