"""The `gemmlab` command line: bad input is a one-line error with exit status 2, never a
traceback (the grade and assign options are tested with their modules); `gemmlab grade` is the
grader's own command, run with the same arguments and exit status."""
import subprocess
import sys

import pytest

from gemmlab.collectives import allreduce_command


def _gemmlab(*args):
    return subprocess.run([sys.executable, "-m", "gemmlab.cli", *args], capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("args, message", [
    (["--np", "0"], "the number of ranks (--np) must be a whole number >= 1, got 0"),
    (["--np", "-3"], "the number of ranks (--np) must be a whole number >= 1, got -3"),
    (["--np", "two"], "argument --np: invalid int value: 'two'"),
    (["--size", "abc"], "size 'abc': expected a number of bytes with an optional unit"),
    (["--size", "0"], "size 0 bytes: expected a positive multiple of 4"),
    (["--size", "6"], "size 6 bytes: expected a positive multiple of 4"),
    (["--repeats", "0"], "repeats must be a whole number >= 1, got 0"),
    (["--repeats", "-2"], "repeats must be a whole number >= 1, got -2"),
    (["--algo", "fastest"], "algorithms ['fastest']: expected some of ring, centralized, mpi"),
])
def test_allreduce_rejects_bad_numbers_in_one_line(args, message):
    done = _gemmlab("allreduce", *args)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert message in done.stderr.strip().splitlines()[-1]


def test_allreduce_refuses_a_job_that_would_not_fit_in_memory():
    done = _gemmlab("allreduce", "--np", "100", "--size", "64MiB")
    available = allreduce_command.available_memory()
    need = 100 * (allreduce_command.RANK_BUFFERS * (64 << 20) + allreduce_command.RANK_BASE_BYTES)
    if available is None or available >= need:
        pytest.skip("this machine has room for 100 ranks of 64 MiB")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"gemmlab allreduce: 100 ranks of 64 MiB need about "
                                  f"{allreduce_command.format_size(need)} of memory")
    assert "use fewer ranks (--np) or a smaller --size" in done.stderr


def test_the_memory_estimate_grows_with_ranks_and_size(monkeypatch):
    import argparse
    monkeypatch.setattr(allreduce_command, "available_memory", lambda: 4 << 30)
    args = argparse.Namespace(n_ranks=4, repeats=5, iters=20, timeout=300, backend="mpi")
    allreduce_command.check_arguments(args, ["64MiB"])                      # 4 x 448 MiB fits in 4 GiB
    with pytest.raises(ValueError, match="8 ranks of 128 MiB need about 6.5 GiB"):
        allreduce_command.check_arguments(argparse.Namespace(**{**vars(args), "n_ranks": 8}), ["1MiB", "128MiB"])


def test_version_and_python_dash_m():
    import gemmlab
    for command in ([sys.executable, "-m", "gemmlab", "--version"],
                    [sys.executable, "-m", "gemmlab.cli", "--version"]):
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and done.stdout.strip() == f"gemmlab {gemmlab.__version__}"


def test_grade_runs_the_graders_command_with_the_same_arguments_and_status(tmp_path):
    for args in (["--help"], ["--timeout", "0", "subs"], [str(tmp_path / "missing")]):
        alias = _gemmlab("grade", *args)
        own = subprocess.run([sys.executable, "-m", "gemmlab_grader", *args], capture_output=True,
                             text=True, timeout=120)
        assert (alias.returncode, alias.stdout, alias.stderr) == \
            (own.returncode, own.stdout, own.stderr)
    assert alias.returncode == 2 and "is not a folder of submissions" in alias.stderr
    assert _gemmlab("grade", "--help").stdout.startswith("usage: gemmlab grade")
    assert "grade" in _gemmlab("--help").stdout
