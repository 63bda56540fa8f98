"""A release is a repository to publish for students: a LICENSE, a README written for them, a
Makefile of their two targets, only their docs, nothing of the instructor's (solutions, tests,
the grader, the instructors' docs and plans); and its wheel, installed in a fresh venv, carries
the course: `gemmlab work` makes the student folder and a check judges an answer."""
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from gemmlab.grading import handout

ROOT = Path(__file__).resolve().parent.parent
INSTRUCTORS = ("solutions", "tests", "gemmlab_grader", ".ci", "docs/rounds", "docs/grading.md",
               "docs/architecture.md", "docs/site", "docs/release")


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    dest = tmp_path_factory.mktemp("release") / "course"
    assert handout.release_main(dest, root=ROOT) == 0
    return dest


def test_a_release_has_a_license_setup_py_and_only_the_students_docs(released):
    assert (released / "LICENSE").read_text() == (ROOT / "LICENSE").read_text()
    assert (released / "setup.py").is_file() and (released / "MANIFEST.in").is_file()
    assert sorted(p.name for p in (released / "docs").iterdir()) == sorted(handout.STUDENT_DOCS)
    for part in INSTRUCTORS:
        assert not (released / part).exists(), part


def test_its_readme_is_written_for_students_and_names_nothing_that_does_not_ship(released):
    readme = (released / "README.md").read_text()
    assert "make lab" in readme and "gemmlab work" in readme and "check(" in readme
    for absent in ("make test", "make check", "solutions/", "gemmlab grade", "gemmlab-grade",
                   "tests/", "docs/grading.md", "docs/architecture.md"):
        assert absent not in readme, absent
    for link in [part.split(")")[0] for part in readme.split("](")[1:]]:
        assert (released / link).exists(), link              # every link resolves in the release


def test_its_makefile_has_the_students_targets_only_and_runs(released):
    makefile = (released / "Makefile").read_text()
    targets = {line.split(":")[0] for line in makefile.splitlines()
               if line[:1].isalpha() and ":" in line and ":=" not in line}
    assert targets == {"venv", "lab"}
    assert "pytest" not in makefile and "solutions" not in makefile
    done = subprocess.run(["make", "-n", "lab"], cwd=released, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and "gemmlab work work" in done.stdout, done.stderr


@pytest.mark.slow
def test_its_wheel_installed_in_a_fresh_venv_carries_the_course(released, tmp_path):
    dist = tmp_path / "dist"
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", dist,
                            released], capture_output=True, text=True, timeout=900)
    assert built.returncode == 0, built.stderr
    [wheel] = dist.glob("gemmlab-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "gemmlab/_course/exercises/07_ring_allreduce.ipynb" in names
    assert "gemmlab/_course/notebooks/00_start_here.ipynb" in names
    assert not [n for n in names if n.startswith(("gemmlab_grader/", "solutions/"))]
    venv = tmp_path / "venv"
    subprocess.run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", venv],
                   check=True, timeout=300)
    python = venv / "bin" / "python"
    subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps", wheel], check=True,
                   timeout=600)
    # the dependencies (not what is tested) from the course's venv, after the venv's own
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "course-dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    elsewhere = tmp_path / "home"
    elsewhere.mkdir()
    work = subprocess.run([venv / "bin" / "gemmlab", "work", "mine"], cwd=elsewhere,
                          capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "GEMMLAB_BACKEND": "sim"})
    assert work.returncode == 0, work.stderr
    assert (elsewhere / "mine" / "exercises" / "07_ring_allreduce.ipynb").is_file()
    assert (elsewhere / "mine" / "notebooks" / "00_start_here.ipynb").is_file()
    check = subprocess.run([python, "-c", "import gemmlab; print(gemmlab.__file__); "
                            "from gemmlab.grading import check; "
                            "r = check('01.weights_gib', 7e9 * 2 / 2**30); print(r.status)"],
                           cwd=elsewhere, capture_output=True, text=True, timeout=300,
                           env={"PATH": "/usr/bin:/bin", "GEMMLAB_BACKEND": "sim"})
    assert check.returncode == 0, check.stderr
    where, status = check.stdout.split()[0], check.stdout.split()[-1]
    assert where.startswith(str(venv)) and status == "pass"
