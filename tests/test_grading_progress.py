"""`gemmlab progress`: the verdicts on a student's own notebooks, judged in gemmlab itself (one
answered right, one wrong, the rest untouched and not run), also with no grader importable (a
release has none), the table within 100 columns, the reveals from the record, and a bar per
lesson."""
import json
import os
import subprocess
import sys
from pathlib import Path

from gemmlab.grading import handout, progress, student

NO_GRADER = '''import sys
class NoGrader:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == "gemmlab_grader":
            raise ModuleNotFoundError(f"No module named {name!r} (none in a student release)")
sys.meta_path.insert(0, NoGrader())
'''
ROOT = Path(__file__).resolve().parents[1]


def _answer(path, old, new):
    nb = json.loads(path.read_text())
    for cell in nb["cells"]:
        source = "".join(cell["source"])
        if old in source:
            cell["source"] = source.replace(old, new).replace('assert r.status == "not attempted"', "")
    path.write_text(json.dumps(nb))


def test_progress_judges_the_students_notebooks_and_fits_100_columns(tmp_path, monkeypatch):
    """`gemmlab progress` as run in a terminal: it says what it does before any notebook has run,
    runs the two changed notebooks two at a time, says each one's counts, then the table."""
    work = tmp_path / "work"
    monkeypatch.chdir(tmp_path)
    handout.make_student_folder(work)
    _answer(work / "exercises" / "00_start_here_exercises.ipynb", "matrix_mib = ...",
            "matrix_mib = 4")
    _answer(work / "exercises" / "01_numbers_and_precision_exercises.ipynb", "import gemmlab",
            "import gemmlab  # changed, nothing answered")
    record = json.loads((work / student.PROGRESS).read_text())
    record["revealed"] = ["00.matrix_mib"]
    (work / student.PROGRESS).write_text(json.dumps(record))
    with subprocess.Popen([sys.executable, "-m", "gemmlab", "progress", str(work), "--lesson",
                           "00", "--lesson", "01", "--picture", str(tmp_path / "p.png")],
                          stdout=subprocess.PIPE, text=True) as command:
        first = command.stdout.readline()            # before any notebook has run
        lines = [first, *command.stdout.read().splitlines()]
    assert command.returncode == 0
    assert first.startswith("gemmlab progress: judging the exercise notebooks")
    assert max(len(line) for line in lines) <= 100
    text = "\n".join(lines)
    assert "2 of yours to run, 2 at a time" in text
    assert "  00_start_here_exercises.ipynb, 01_numbers_and_precision_exercises.ipynb" in text
    assert "00_start_here_exercises.ipynb: 1 passed, 0 failed" in text
    assert "01_numbers_and_precision_exercises.ipynb: 0 passed, 0 failed" in text
    row = next(line for line in lines if line.startswith("00 "))
    passed, failed, todo, shown = map(int, row.split()[1:5])
    assert (passed, failed, shown) == (1, 0, 1) and todo > 5
    assert next(line for line in lines if line.startswith("01 ")).split()[1:3] == ["0", "0"]
    assert (tmp_path / "p.png").stat().st_size > 1000


def test_progress_needs_no_grader(tmp_path):
    """`gemmlab progress --json` on a folder `gemmlab work` made, with every import of
    gemmlab_grader refused, in the command and in the notebook's kernel (a sitecustomize on
    PYTHONPATH): the verdicts all the same."""
    (tmp_path / "block").mkdir()
    (tmp_path / "block" / "sitecustomize.py").write_text(NO_GRADER)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [str(tmp_path / "block"), os.environ.get("PYTHONPATH")])))
    blocked = subprocess.run([sys.executable, "-c", "import gemmlab_grader"], env=env,
                             capture_output=True, text=True, cwd=tmp_path)
    assert "none in a student release" in blocked.stderr
    made = subprocess.run([sys.executable, "-m", "gemmlab", "work", "work"], env=env,
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert made.returncode == 0, made.stderr
    _answer(tmp_path / "work" / "exercises" / "00_start_here_exercises.ipynb", "matrix_mib = ...",
            "matrix_mib = 4")
    done = subprocess.run([sys.executable, "-m", "gemmlab", "progress", "work", "--json",
                           "--lesson", "00", "--lesson", "01"], env=env, capture_output=True,
                          text=True, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["00"]["00.matrix_mib"] == "pass"
    assert sorted(set(found["00"].values())) == ["not attempted", "pass"]
    assert set(found["01"].values()) == {"not attempted"}


def test_a_notebook_as_handed_out_is_not_run(tmp_path, monkeypatch):
    work = tmp_path / "work"
    monkeypatch.chdir(tmp_path)
    handout.make_student_folder(work)
    monkeypatch.setattr(progress, "collect", lambda *a: (_ for _ in ()).throw(AssertionError))
    found = progress.verdicts(work, ["00", "01"])
    assert set(found) == {"00", "01"}
    assert all(s == "not attempted" for lesson in found.values() for s in lesson.values())


def test_a_notebook_under_the_exercises_former_name_counts_as_its_lessons(tmp_path, monkeypatch):
    """A student folder made before exercises were named NN_name_exercises.ipynb: `gemmlab
    progress` counts the student's 00_start_here.ipynb as lesson 00's work; beside a handed-out
    copy under the new name, that copy counts (as the grader counts), and it says which."""
    work = tmp_path / "work"
    monkeypatch.chdir(tmp_path)
    handout.make_student_folder(work)
    current = work / "exercises" / "00_start_here_exercises.ipynb"
    former = current.with_name("00_start_here.ipynb")
    current.rename(former)
    _answer(former, "matrix_mib = ...", "matrix_mib = 5")
    command = [sys.executable, "-m", "gemmlab", "progress", str(work), "--lesson", "00"]
    shown = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert shown.returncode == 0, shown.stderr
    assert "[1/1] 00_start_here.ipynb: 0 passed, 1 failed" in shown.stdout
    row = next(line for line in shown.stdout.splitlines() if line.startswith("00 "))
    assert row.split()[1:3] == ["0", "1"]                  # passed 0, failed 1: judged as 00's
    current.write_bytes((ROOT / "exercises" / current.name).read_bytes())
    shown = subprocess.run(command + ["--json"], capture_output=True, text=True, timeout=600)
    assert shown.returncode == 0, shown.stderr
    assert set(json.loads(shown.stdout)["00"].values()) == {"not attempted"}
    assert "lesson 00: 00_start_here_exercises.ipynb counts (the handed-out name, else the " \
           "newest); not counted: 00_start_here.ipynb" in shown.stderr


def test_a_folder_without_exercises_is_one_line(tmp_path):
    done = subprocess.run([sys.executable, "-m", "gemmlab", "progress", str(tmp_path), "--json"],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "gemmlab work" in done.stderr and not done.stdout


def test_the_table_and_figure_of_counts():
    rows = [("00", 3, 1, 2, 1), ("05", 0, 0, 8, 0)]
    text = progress.table(rows)
    assert all(len(line) <= 100 for line in text.splitlines())
    assert "#" * 20 in text.splitlines()[1] and "x" * 7 in text.splitlines()[1]
    figure = progress.figure(rows)
    assert len(figure.axes[0].patches) == 6 and "1 revealed" in figure.axes[0].texts[0].get_text()


def test_gl_progress_counts_inside_a_running_kernel_notebook_by_notebook(tmp_path, monkeypatch):
    """What a student sees when a cell runs gl.progress() in Jupyter: a line per notebook while it
    works, the counts right (a wrong answer counts as failed; not the 0 passed, 0 failed of
    asyncio.run() inside the kernel's running loop), and no returned value shown a second
    time."""
    from nbclient import NotebookClient
    from nbformat.v4 import new_code_cell, new_notebook

    from gemmlab import notebook_run
    work = tmp_path / "work"
    monkeypatch.chdir(tmp_path)
    handout.make_student_folder(work)
    _answer(work / "exercises" / "00_start_here_exercises.ipynb", "matrix_mib = ...",
            "matrix_mib = 5")
    nb = new_notebook(cells=[new_code_cell(f"import gemmlab as gl\n"
                                           f"gl.progress({str(work)!r}, lessons=['00', '01'], "
                                           f"draw=False)")])
    NotebookClient(nb, timeout=600, kernel_manager_class=notebook_run.LocalAsyncKernelManager,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = nb.cells[0].outputs
    assert not [o for o in outputs if o.output_type in ("execute_result", "error")], outputs
    assert not [o for o in outputs if o.get("name") == "stderr"], outputs
    printed = "".join(o.get("text", "") for o in outputs)
    assert "[1/1] 00_start_here_exercises.ipynb: 0 passed, 1 failed" in printed
    row = next(line for line in printed.splitlines() if line.startswith("00 "))
    assert row.split()[1:3] == ["0", "1"]
    assert printed.index("[1/1] 00_start_here_exercises") < printed.index("lesson  ")
