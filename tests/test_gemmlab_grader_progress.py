"""`gemmlab progress`: the grader's verdicts on a student's own notebooks (one answered right, one
wrong, the rest untouched and not run), the table within 100 columns, the reveals from the record,
and a bar per lesson."""
import json
import subprocess
import sys

from gemmlab.grading import handout, progress, student


def _answer(path, old, new):
    nb = json.loads(path.read_text())
    for cell in nb["cells"]:
        source = "".join(cell["source"])
        if old in source:
            cell["source"] = source.replace(old, new).replace('assert r.status == "not attempted"', "")
    path.write_text(json.dumps(nb))


def test_progress_judges_the_students_notebooks_and_fits_100_columns(tmp_path, monkeypatch):
    work = tmp_path / "work"
    monkeypatch.chdir(tmp_path)
    handout.make_student_folder(work)
    _answer(work / "exercises" / "00_start_here.ipynb", "matrix_mib = ...", "matrix_mib = 4")
    record = json.loads((work / student.PROGRESS).read_text())
    record["revealed"] = ["00.matrix_mib"]
    (work / student.PROGRESS).write_text(json.dumps(record))
    done = subprocess.run([sys.executable, "-m", "gemmlab", "progress", str(work), "--lesson", "00",
                           "--lesson", "01",
                           "--picture", str(tmp_path / "p.png")], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert max(len(line) for line in lines) <= 100
    row = next(line for line in lines if line.startswith("00 "))
    passed, failed, todo, shown = map(int, row.split()[1:5])
    assert (passed, failed, shown) == (1, 0, 1) and todo > 5
    assert next(line for line in lines if line.startswith("01 ")).split()[1:3] == ["0", "0"]
    assert (tmp_path / "p.png").stat().st_size > 1000


def test_a_wrong_answer_counts_as_failed(tmp_path, monkeypatch):
    work = tmp_path / "work"
    monkeypatch.chdir(tmp_path)
    handout.make_student_folder(work)
    _answer(work / "exercises" / "00_start_here.ipynb", "matrix_mib = ...", "matrix_mib = 5")
    found = progress.verdicts(work, ["00"])
    assert found["00"]["00.matrix_mib"] == "fail"
    rows = progress.tally(found, set())
    assert rows[0][2] >= 1


def test_the_table_and_figure_of_counts():
    rows = [("00", 3, 1, 2, 1), ("05", 0, 0, 8, 0)]
    text = progress.table(rows)
    assert all(len(line) <= 100 for line in text.splitlines())
    assert "#" * 20 in text.splitlines()[1] and "x" * 7 in text.splitlines()[1]
    figure = progress.figure(rows)
    assert len(figure.axes[0].patches) == 6 and "1 revealed" in figure.axes[0].texts[0].get_text()
