"""docs/install.md's "what runs on your GPU" table is this module's answer for each GPU of the hardware
table with its attributes faked (tests/fakegpus.py): a test per cell, and docs/install.md kept equal."""
import dataclasses
from pathlib import Path

import pytest

from gemmlab import whatruns

from fakegpus import FAKE_GPUS, spec

ROOT = Path(__file__).resolve().parent.parent
BEGIN, END = "<!-- what-runs:begin -->", "<!-- what-runs:end -->"


def _readme_block():
    text = (ROOT / "docs" / "install.md").read_text(encoding="utf-8")
    return text.split(BEGIN, 1)[1].split(END, 1)[0].strip().splitlines()


def test_the_readme_table_is_the_modules_answer_for_every_gpu():
    assert _readme_block() == whatruns.table({row: spec(row) for row in FAKE_GPUS})


@pytest.mark.parametrize("row", list(FAKE_GPUS))
def test_the_ladder_runs_on_every_gpu_of_the_table(row):
    assert whatruns.ladder_fits(spec(row)) == (True, "")
    assert whatruns.cell("05", spec(row)) == "kernels on the GPU"


def test_lesson_12_follows_the_tensor_core_paths_of_each_gpu():
    assert whatruns.cell("12", spec("T4")) == "WMMA kernel (FP16)"        # sm_75: no BF16
    assert whatruns.cell("12", spec("A100 40GB")) == "WMMA kernel (FP16, BF16)"
    assert whatruns.cell("12", spec("H200 SXM")) == "WMMA kernel (FP16, BF16) + Hopper ladder"
    assert whatruns.cell("12", spec("B200")) == "WMMA kernel (FP16, BF16)"  # sm_100: no sm_90a cubin
    assert whatruns.cell("12", spec("RTX 5090")) == "WMMA kernel (FP16, BF16)"
    volta = dataclasses.replace(spec("T4"), cc_major=7, cc_minor=0)
    assert whatruns.cell("12", volta) == "WMMA emulation"


def test_nccl_lessons_need_two_gpus_and_an_old_gpu_falls_back_to_the_simulator():
    assert whatruns.cell("07", spec("H200 SXM")) == "CPU (MPI); 2-GPU runs recorded"
    assert whatruns.cell("07", spec("H200 SXM"), gpus=2) == "NCCL on 2 GPUs"
    volta = dataclasses.replace(spec("T4"), cc_major=7, cc_minor=0)
    assert whatruns.ladder_fits(volta)[0] is False and whatruns.cell("08", volta) == "simulator"
    small = dataclasses.replace(spec("T4"), shared_per_block=16 * 1024)
    assert "exceed" in whatruns.ladder_fits(small)[1]
    with pytest.raises(ValueError, match="00..16"):
        whatruns.cell("17", spec("T4"))


def test_only_the_lessons_with_mpi_cells_say_mpi_and_lessons_00_and_15_run_kernels():
    import nbformat
    for lesson in whatruns.LESSONS:
        (path,) = (ROOT / "notebooks").glob(f"{lesson}_*.ipynb")
        code = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells
                         if c.cell_type == "code")
        assert ("MPI" in whatruns.cell(lesson, spec("T4"))) == ("jobs.mpi_ready()" in code), lesson
    assert whatruns.cell("13", spec("T4")) == "CPU (NumPy)"
    assert whatruns.cell("00", spec("T4")) == whatruns.cell("15", spec("T4")) == "kernels on the GPU"
    assert whatruns.cell("16", spec("T4")) == "kernels on the GPU"      # the worked attention kernel
