"""`gemmlab doctor`: one line per check, never a traceback, also when the GPU backend cannot start."""
import os
import subprocess
import sys

import pytest

from gemmlab import cudadriver, doctor


def _doctor(**env):
    environ = {**os.environ, **env}
    environ.pop("NUMBA_ENABLE_CUDASIM", None)
    return subprocess.run([sys.executable, "-m", "gemmlab", "doctor"], capture_output=True,
                          text=True, timeout=120, env=environ)


def test_doctor_says_why_the_backend_was_chosen_and_checks_the_tools():
    out = _doctor(GEMMLAB_BACKEND="sim")
    assert out.returncode == 0 and "Traceback" not in out.stderr + out.stdout
    labels = [line.split()[0] for line in out.stdout.splitlines() if line and not line[0].isspace()]
    for label in ("backend", "gpu", "driver", "nvvm", "nvrtc", "ptxas", "mpi", "bubblewrap",
                  "chromium", "numba-cuda"):
        assert label in labels, label
    assert "sim (GEMMLAB_BACKEND=sim)" in out.stdout and "problem sizes" in out.stdout


@pytest.mark.skipif(cudadriver.device_count() > 0, reason="a GPU is present")
def test_forcing_the_gpu_without_one_is_one_line_and_a_nonzero_status():
    out = _doctor(GEMMLAB_BACKEND="gpu")
    assert out.returncode == 1 and "Traceback" not in out.stderr + out.stdout
    first = out.stdout.splitlines()[0]
    assert first.startswith("backend") and "no NVIDIA GPU is visible" in first
    assert "mpi" in out.stdout                       # the other checks still ran


def test_a_check_that_breaks_becomes_its_own_line(monkeypatch):
    def broken():
        raise OSError("the disk\nis on fire")
    monkeypatch.setattr(doctor, "CHECKS", [broken, doctor.tools])
    rows = doctor.lines()
    assert rows[0] == ("broken", "check failed: OSError: the disk is on fire")
    assert [label for label, _ in rows[1:]] == ["bubblewrap", "chromium"]


def test_missing_mpi_says_how_to_get_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "mpi4py", None)          # import mpi4py now fails
    (label, text), = doctor.mpi()
    assert label == "mpi" and "gemmlab[mpi]" in text and "WSL" in text


def test_on_macos_the_compilers_line_says_there_are_none_to_install(monkeypatch):
    monkeypatch.setattr(sys, "platform", "darwin")
    rows = dict(doctor.compilers())
    assert set(rows) == {"nvvm", "nvrtc", "ptxas"}
    assert all("none on macOS" in text and "the grader checks it" in text and "pip install" not in
               text for text in rows.values())
