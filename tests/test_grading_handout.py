"""What students get: `gemmlab work` copies the exercises into work/ and never over a student's
file; `make lab` does it, and keeps its token off the command line (other users see that in
`ps`) while printing the URL; `gemmlab assign --release` writes a course without solutions and
without the grader, a repository to publish (LICENSE, a students' README and Makefile, only
their docs) whose wheel carries the course."""
import io
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

import pytest

from gemmlab.grading import assign, handout
from gemmlab.grading.bank import get_question, lesson_questions
import gemmlab_grader
from gemmlab_grader.answers import check, pack
from gemmlab_grader.isolate import clean_env, python_argv

ROOT = Path(__file__).resolve().parent.parent


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _status(port, token):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token={token}",
                                    timeout=5) as reply:
            return reply.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except (urllib.error.URLError, ConnectionError):
        return None


def _session(sid):
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                if int(f.read().rsplit(")", 1)[1].split()[3]) == sid:
                    yield int(pid)
        except (OSError, IndexError, ValueError):
            pass


@pytest.fixture
def course(tmp_path):
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
    for folder in ("notebooks", "exercises"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    (tmp_path / "work" / "exercises").mkdir(parents=True)
    (tmp_path / "work" / "exercises" / "01_numbers_and_precision_exercises.ipynb") \
        .write_text("my answers")
    return tmp_path


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
@pytest.mark.skipif(not (Path(sys.prefix) / "bin" / "gemmlab").exists(),
                    reason="needs the gemmlab command installed in this environment "
                           "(make lab runs it; pip install -e .)")
def test_make_lab_keeps_the_token_off_the_command_line_and_the_students_work(course):
    port, venv = _free_port(), Path(sys.prefix)
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    lab = subprocess.Popen(["make", "-s", "--no-print-directory", "lab", f"PORT={port}",
                            f"VENV={venv}", "-o", str(venv / ".installed-stamp"),
                            "-o", str(venv / ".lab-stamp")],   # installed already: the copy
                                                               # has no package to install
                           cwd=course, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        printed, token = "", None
        deadline = time.monotonic() + 120
        while token is None and time.monotonic() < deadline:
            printed += lab.stdout.readline()
            found = re.search(r"Open: http://localhost:\d+/lab/tree/\S+\?token=([0-9a-f]{32})",
                              printed)
            token = found and found.group(1)
        assert token, printed
        while _status(port, token) != 200 and time.monotonic() < deadline:
            time.sleep(0.3)
        assert _status(port, token) == 200
        assert _status(port, "0" * 32) == 403
        processes = list(_session(lab.pid))
        command_lines = [Path(f"/proc/{pid}/cmdline").read_bytes() for pid in processes]
        assert any(b"jupyter" in c for c in command_lines)
        assert not any(token.encode() in c for c in command_lines)
        assert (course / "work" / "exercises" / "01_numbers_and_precision_exercises.ipynb") \
            .read_text() == "my answers"
        assert "/lab/tree/notebooks/00_start_here.ipynb" in printed     # work/ is the root
        assert printed.count("Your student folder is work/") == 1
        assert len(list((course / "work" / "exercises").glob("[0-9][0-9]_*.ipynb"))) == \
            len(list((course / "exercises").glob("[0-9][0-9]_*.ipynb")))
    finally:
        os.killpg(lab.pid, signal.SIGTERM)
        try:
            lab.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(lab.pid, signal.SIGKILL)
            lab.wait()


def test_work_copies_new_exercises_and_never_overwrites_a_students(tmp_path):
    ex, work = tmp_path / "exercises", tmp_path / "work"
    ex.mkdir()
    (ex / "01_x.ipynb").write_text("v1 of 01")
    assert handout.copy_missing(ex, work) == (["01_x.ipynb"], [])
    (work / "01_x.ipynb").write_text("my answers")
    (work / "my_notes.ipynb").write_text("notes")
    (ex / "01_x.ipynb").write_text("v2 of 01")                # a new course version
    (ex / "02_y.ipynb").write_text("v1 of 02")
    assert handout.copy_missing(ex, work) == (["02_y.ipynb"], ["01_x.ipynb"])
    assert (work / "01_x.ipynb").read_text() == "my answers"
    assert (work / "my_notes.ipynb").read_text() == "notes"


def test_work_is_ignored_by_git_and_never_run_by_make_test():
    assert "/work/" in (ROOT / ".gitignore").read_text().split()
    testpaths = re.search(r"testpaths = \[(.*?)\]", (ROOT / "pyproject.toml").read_text()).group(1)
    assert "work" not in testpaths
    recipe = (ROOT / "Makefile").read_text().split("\ntest:", 1)[1].split("\n\n", 1)[0]
    assert "assign" not in recipe and "work" not in recipe


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    dest = tmp_path_factory.mktemp("release") / "course"
    assert handout.release_main(dest, root=ROOT) == 0
    return dest


def test_a_release_has_the_course_but_no_solutions(released):
    present = {p.name for p in released.iterdir()}
    assert {"README.md", "Makefile", "pyproject.toml", "environment.yml", "notebooks",
            "exercises", "gemmlab"} <= present
    assert not {"solutions", "tests", ".ci", "gemmlab_grader"} & present
    notebooks = list(released.rglob("*.ipynb"))
    assert len(notebooks) >= 30
    assert not [p for p in notebooks if assign.BEGIN in p.read_text()]
    assert not list(released.rglob("__pycache__")) and not (released / "exercises" / assign.MANIFEST).exists()


def test_a_release_declares_no_command_of_the_grader(released):
    assert 'gemmlab-grade = "gemmlab_grader.' in (ROOT / "pyproject.toml").read_text()
    pyproject = (released / "pyproject.toml").read_text()
    assert "gemmlab_grader." not in pyproject.split("[project.scripts]")[1].split("[")[0]
    assert 'gemmlab = "gemmlab.cli:main"' in pyproject
    assert not list(released.rglob("gemmlab_grader"))


def test_a_releases_exercises_run_with_its_own_package(released, tmp_path):
    """The grader's runner (copied beside it, as the grader does) runs a release's exercise on the
    release's own gemmlab."""
    root = tmp_path / "pkg"
    shutil.copytree(released / "gemmlab", root / "gemmlab")
    shutil.copytree(Path(gemmlab_grader.__file__).parent, root / "gemmlab_grader",
                    ignore=shutil.ignore_patterns("__pycache__"))
    notebook = (released / "exercises" / "02_gemm_from_neurons_exercises.ipynb").read_bytes()
    requests = [{"id": q, "answer_name": get_question(q).answer_name,
                 "code": get_question(q).is_code} for q in lesson_questions(2)]
    request = {"timeout": 60, "requests": requests, "notebook_bytes": len(notebook)}
    done = subprocess.run(python_argv(root, "gemmlab_grader.runner", tmp_path), cwd=tmp_path,
                          env=clean_env(tmp_path), capture_output=True, timeout=300,
                          input=pack(json.dumps(request).encode()) + pack(notebook))
    got = check(io.BytesIO(done.stdout))
    assert done.returncode == 0 and got["run"]["errors"] == [] and got["answers"], got
    assert got["answers"]["02.b_row_stride"] == {"value": {"t": "ellipsis"}}


def test_a_release_never_writes_over_a_folder(tmp_path, capsys):
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "keep.txt").write_text("mine")
    assert handout.release_main(tmp_path / "x", root=ROOT) == 2
    assert "never writes over anything" in capsys.readouterr().err
    assert handout.release_main(ROOT / "notebooks" / "rel", root=ROOT) == 2


def test_work_from_an_installed_course_makes_the_same_student_folder(tmp_path, monkeypatch):
    from gemmlab import course
    installed = tmp_path / "site" / "_course"
    for part, names in (("exercises", ["01_x.ipynb", "02_y.ipynb"]), ("notebooks", ["01_x.ipynb", "12b_x.ipynb"]),
                        ("benchmarks", []), ("docs", ["glossary.md"])):
        (installed / part).mkdir(parents=True)
        for name in names:
            (installed / part / name).write_text("{}")
    monkeypatch.setattr(course, "root", lambda: installed)
    monkeypatch.chdir(tmp_path)                          # no ./exercises here: not a checkout
    mine = tmp_path / "mine"
    (mine / "exercises").mkdir(parents=True)
    (mine / "exercises" / "01_x.ipynb").write_text("my answers")
    (mine / "02_y.ipynb").write_text("my answers to 02, in the older layout")
    assert handout.work_main(None, str(mine)) == 0
    assert (mine / "exercises" / "01_x.ipynb").read_text() == "my answers"   # never overwritten
    assert (mine / "exercises" / "02_y.ipynb").read_text() == \
        "my answers to 02, in the older layout"                              # carried over
    assert (mine / "02_y.ipynb").exists()                                    # and left there
    assert (mine / "notebooks" / "01_x.ipynb").exists()
    assert (mine / "notebooks" / "12b_x.ipynb").exists()              # a lesson's part 2 too
    assert (mine / "docs" / "glossary.md").exists()
    assert (mine / "gemmlab-progress.json").exists()


def test_copy_missing_takes_a_file_under_its_former_name_for_it(tmp_path):
    ex, work, earlier = tmp_path / "exercises", tmp_path / "work", tmp_path / "earlier"
    for folder in (ex, work, earlier):
        folder.mkdir()
    for name in ("05_t_exercises.ipynb", "06_u_exercises.ipynb", "07_v_exercises.ipynb"):
        (ex / name).write_text(f"blank {name}")
    (work / "05_t.ipynb").write_text("my 05")
    (earlier / "06_u.ipynb").write_text("my 06, older layout")
    former = {"05_t_exercises.ipynb": "05_t.ipynb", "06_u_exercises.ipynb": "06_u.ipynb"}.get
    assert handout.copy_missing(ex, work, earlier=earlier, former=former) == \
        (["06_u_exercises.ipynb", "07_v_exercises.ipynb"], ["05_t.ipynb"])
    assert sorted(p.name for p in work.iterdir()) == \
        ["05_t.ipynb", "06_u_exercises.ipynb", "07_v_exercises.ipynb"]
    assert (work / "05_t.ipynb").read_text() == "my 05"
    assert (work / "06_u_exercises.ipynb").read_text() == "my 06, older layout"


def test_work_keeps_exercises_under_their_former_names_and_puts_no_blank_beside_them(tmp_path):
    """A student folder made before exercises were named NN_name_exercises.ipynb: `gemmlab work`
    (what `make lab` and `gemmlab lab` run) leaves the student's files, adds no blank copy under
    the new name, copies the rest, and says in one line which files are theirs."""
    mine = tmp_path / "work" / "exercises"
    mine.mkdir(parents=True)
    (mine / "05_tiled_gemm.ipynb").write_text("my answers to 05")
    (mine / "07_ring_allreduce.ipynb").write_text("my answers to 07")
    (tmp_path / "work" / "01_numbers_and_precision.ipynb").write_text("01, oldest layout")
    for _ in range(2):                       # and again: still nothing beside them
        done = subprocess.run([sys.executable, "-m", "gemmlab", "work", str(tmp_path / "work")],
                              cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        assert (mine / "05_tiled_gemm.ipynb").read_text() == "my answers to 05"
        assert (mine / "07_ring_allreduce.ipynb").read_text() == "my answers to 07"
        assert not (mine / "05_tiled_gemm_exercises.ipynb").exists()
        assert not (mine / "07_ring_allreduce_exercises.ipynb").exists()
        assert (mine / "01_numbers_and_precision_exercises.ipynb").read_text() == \
            "01, oldest layout"                          # the older layout's file, carried over
        assert (mine / "00_start_here_exercises.ipynb").read_bytes() == \
            (ROOT / "exercises" / "00_start_here_exercises.ipynb").read_bytes()
        told = [line for line in done.stdout.splitlines() if "former names" in line]
        assert told == [f"Your exercise notebooks under their former names stay yours, as they "
                        f"are: 05_tiled_gemm.ipynb, 07_ring_allreduce.ipynb in "
                        f"{tmp_path / 'work' / 'exercises'}/ (no blank NN_name_exercises.ipynb "
                        f"was put beside them; rename one to that name to open it from its "
                        f"lesson's link)."]


def test_work_with_no_exercises_is_an_error_not_zero_copied(tmp_path, monkeypatch, capsys):
    from gemmlab import course
    monkeypatch.setattr(course, "root", lambda: tmp_path / "nothing")
    monkeypatch.chdir(tmp_path)
    assert handout.work_main(None, str(tmp_path / "mine")) == 2
    assert "has no exercises/" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert handout.work_main(str(tmp_path / "empty"), str(tmp_path / "mine")) == 2
    assert "no exercise notebooks" in capsys.readouterr().err


# --- a release is a repository to publish for students -------------------------------------------
# A LICENSE, a README written for them, a Makefile of their two targets, only their docs, nothing
# of the instructor's; its wheel, installed in a fresh venv, carries the course.

INSTRUCTORS = ("solutions", "tests", "gemmlab_grader", ".ci", "docs/rounds", "docs/grading.md",
               "docs/architecture.md", "docs/site", "docs/release")


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
    assert done.returncode == 0 and "gemmlab lab work" in done.stdout, done.stderr


@pytest.mark.slow
def test_its_wheel_installed_in_a_fresh_venv_carries_the_course(released, tmp_path):
    dist = tmp_path / "dist"
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", dist,
                            released], capture_output=True, text=True, timeout=900)
    assert built.returncode == 0, built.stderr
    [wheel] = dist.glob("gemmlab-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "gemmlab/_course/exercises/07_ring_allreduce_exercises.ipynb" in names
    assert "gemmlab/_course/notebooks/00_start_here.ipynb" in names
    assert not [n for n in names if n.startswith(("gemmlab_grader/", "solutions/"))]
    venv = tmp_path / "venv"
    # No pip of its own (ensurepip cost 4.5 CPU-s here): this pip installs into it (--python)
    subprocess.run([getattr(sys, "_base_executable", sys.executable), "-m", "venv",
                    "--without-pip", venv], check=True, timeout=300)
    python = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", python, "install", "-q",
                    "--no-deps", wheel], check=True, timeout=600)
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
    assert (elsewhere / "mine" / "exercises" / "07_ring_allreduce_exercises.ipynb").is_file()
    assert (elsewhere / "mine" / "notebooks" / "00_start_here.ipynb").is_file()
    check = subprocess.run([python, "-c", "import gemmlab; print(gemmlab.__file__); "
                            "from gemmlab.grading import check; "
                            "r = check('01.weights_gib', 7e9 * 2 / 2**30); print(r.status)"],
                           cwd=elsewhere, capture_output=True, text=True, timeout=300,
                           env={"PATH": "/usr/bin:/bin", "GEMMLAB_BACKEND": "sim"})
    assert check.returncode == 0, check.stderr
    where, status = check.stdout.split()[0], check.stdout.split()[-1]
    assert where.startswith(str(venv)) and status == "pass"
