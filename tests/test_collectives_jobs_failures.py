"""How ``jobs.mpirun`` reports an mpiexec that fails: with its exit status, how long it ran and
how much it wrote, so a launcher that died before any rank spoke (seen on the GPU image's Open
MPI 4.1.6, exit 1 and no output) is told apart from a rank's error. mpiexec is a fake script."""
import pytest

from gemmlab.collectives import jobs


@pytest.fixture
def fake_mpiexec(monkeypatch, tmp_path):
    def install(body):
        script = tmp_path / "mpiexec"
        script.write_text("#!/bin/sh\n" + body + "\n")
        script.chmod(0o755)
        monkeypatch.setattr(jobs, "mpi_missing", lambda: None)
        monkeypatch.setattr(jobs, "mpiexec_path", lambda: str(script))
    return install


def test_a_silent_failure_says_the_launcher_wrote_nothing(fake_mpiexec):
    fake_mpiexec("exit 1")
    with pytest.raises(RuntimeError, match=r"status 1 after \d+\.\d s .*wrote nothing on stdout "
                                           r"or stderr"):
        jobs.mpirun(2, ["-c", "pass"], timeout=30)


def test_a_rank_error_keeps_what_it_wrote(fake_mpiexec):
    said = "rank 1: ValueError: bad size"
    fake_mpiexec(f"echo '{said}' >&2; exit 3")
    with pytest.raises(RuntimeError, match=rf"(?s)status 3 after .*0 characters on stdout, "
                                           rf"{len(said) + 1} on stderr.*{said}"):
        jobs.mpirun(2, ["-c", "pass"], timeout=30)
