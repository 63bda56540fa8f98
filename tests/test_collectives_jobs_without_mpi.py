"""MPI is optional (mpich has no Windows wheel): without mpi4py or mpiexec, ``jobs`` says what is
missing and how to get MPI, no job is started, and the lessons' MPI cells are skipped with that
message, so a "Run all" of lessons 07, 09 and 14 goes through. MPI is faked missing here:
``sys.modules["mpi4py"] = None`` makes it unimportable, and no mpiexec is next to the Python or
on PATH."""
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from gemmlab.collectives import jobs

ROOT = Path(__file__).resolve().parent.parent
SKIPPED = "this cell's MPI part is skipped"
FAKE_NO_MPI = 'import sys\nsys.modules["mpi4py"] = None      # the test fakes a machine without MPI'


@pytest.fixture
def no_mpi(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "mpi4py", None)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "bin" / "python"))   # no mpiexec beside it
    monkeypatch.setenv("PATH", str(tmp_path))                                   # nor on PATH


def test_what_is_missing_is_named(no_mpi):
    assert jobs.mpi_missing() == ("mpi4py is not installed; "
                                  "no mpiexec next to this Python or on PATH")


def test_a_cell_is_told_how_to_get_mpi_and_skips(no_mpi, capsys):
    assert jobs.mpi_ready() is False
    out = capsys.readouterr().out
    assert SKIPPED in out and "pip install 'gemmlab[mpi]'" in out and "WSL" in out


def test_no_job_starts_without_mpi(no_mpi, monkeypatch):
    def started(*args, **kwargs):
        raise AssertionError("a process was started")
    monkeypatch.setattr(subprocess, "run", started)
    with pytest.raises(RuntimeError, match=r"(?s)mpi4py is not installed.*gemmlab\[mpi\].*WSL"):
        jobs.mpirun(2, ["-c", "pass"])
    with pytest.raises(RuntimeError, match="no mpiexec found.*gemmlab\\[mpi\\]"):
        jobs.mpiexec_path()


def test_with_mpi_installed_nothing_is_missing():
    pytest.importorskip("mpi4py")
    assert jobs.mpi_missing() is None and jobs.mpi_ready() is True


def _mpi_cells(nb):
    return [c for c in nb.cells if c.cell_type == "code" and "jobs.mpi_ready()" in c.source]


@pytest.mark.parametrize("lesson", ["07_ring_allreduce", "09_megatron_ffn", "14_megatron_attention"])
def test_a_lesson_runs_all_without_mpi_and_its_mpi_cells_say_so(lesson):
    path = ROOT / "notebooks" / f"{lesson}.ipynb"
    nb = nbformat.read(path, as_version=4)
    assert _mpi_cells(nb), f"{lesson} has no MPI cell behind jobs.mpi_ready()"
    nb.cells.insert(0, nbformat.v4.new_code_cell(FAKE_NO_MPI))
    NotebookClient(nb, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()   # raises on error
    for cell in _mpi_cells(nb):
        printed = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
        assert SKIPPED in printed and "gemmlab[mpi]" in printed, cell.source


def test_every_cell_that_starts_mpi_processes_asks_first():
    launches = ("launch.run_allreduce(", "run_mpi(", 'run_layer("mpi"')
    for folder in ("notebooks", "solutions"):
        for path in sorted((ROOT / folder).glob("[0-9][0-9]*_*.ipynb")):
            for cell in nbformat.read(path, as_version=4).cells:
                if cell.cell_type == "code" and any(word in cell.source for word in launches):
                    assert "if jobs.mpi_ready():" in cell.source, f"{path.name}: {cell.source[:80]}"
