"""The reports written: every file, the HTML page with each student's feedback and each
question's pass rate, everything from a submission escaped, a replaced output folder, names no
report may choke on (undecodable bytes, invisible twins), and each report written on its own."""
import csv
import html
import io
import json
import os
import re
import subprocess
import sys

import nbformat
import pytest

from gemmlab_grader import publish
from gemmlab_grader.folders import FolderSnapshot
from gemmlab_grader.grade import NotebookGrade
from gemmlab_grader.submissions import find_submissions
from test_gemmlab_grader_sandbox import WHERE_IT_WORKS

EVIL = "<script>alert('x')</script>\x1b[2J"


def _grades():
    mine = NotebookGrade("alice", "alice/01_x.ipynb", "01",
                         {"01.weights_gib": "pass", "01.fp16_rne": "fail"},
                         {"01.weights_gib": "right", "01.fp16_rne": f"got {EVIL}"})
    theirs = NotebookGrade(EVIL, f"{EVIL}/01_x.ipynb", "01",
                           {"01.weights_gib": "fail", "01.fp16_rne": "not attempted"},
                           {"01.weights_gib": "wrong", "01.fp16_rne": "nothing"}, [f"cell 2 {EVIL}"])
    return [mine, theirs]


def test_every_report_is_written(tmp_path):
    paths = publish.write_all(_grades(), tmp_path, {"jobs": 5, "warnings": []})
    assert [p.name for p in paths if p.parent == tmp_path] == list(publish.FILES)
    assert all(p.is_file() for p in paths)
    info = json.loads((tmp_path / "grades.json").read_text())
    assert info["jobs"] == 5 and [r["passed"] for r in info["notebooks"]] == [1, 0]


def test_the_page_escapes_everything_from_submissions():
    page = publish.page(_grades(), {"jobs": 1, "warnings": [f"planted {EVIL}"],
                                    "restored": [f"the submissions folder: {EVIL}/ (deleted)"]})
    assert "<script>" not in page and "\x1b" not in page
    assert html.escape("<script>alert('x')</script>\\x1b[2J", quote=True) in page
    assert page.count("<details") == 2 and "got &lt;script&gt;" in page


def test_the_page_shows_each_questions_pass_rate_as_a_bar():
    page = publish.page(_grades(), {"jobs": 1})
    bars = re.findall(r'<td>(01\.\w+)</td><td><span class="bar" title="(\d+)%">', page)
    assert bars == [("01.weights_gib", "50"), ("01.fp16_rne", "0")]
    assert 'style="width: 50.0%"' in page


def test_reports_go_beside_an_output_folder_that_became_a_file(tmp_path):
    out = tmp_path / "grades"
    out.write_text("not a folder any more")
    paths = publish.write_all(_grades(), out, {"jobs": 1, "warnings": []})
    assert out.read_text() == "not a folder any more"
    assert paths[0].parent.name.startswith("grades-") and paths[0].is_file()
    warnings = json.loads((paths[0].parent / "grades.json").read_text())["warnings"]
    assert any("the reports went to" in w for w in warnings)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grades", paths[0].parent.name]


# --- names no report may choke on ----------------------------------------------------------------

ZWSP = "\u200b"


def _awkward_submissions(root):
    """A class folder with the names of issue 36: a notebook whose name holds a latin-1 byte (not
    UTF-8; made through a bytes path), and ``honest01`` beside ``honest01`` + a zero-width space."""
    cell = nbformat.v4.new_code_cell("weights_gib = 7e9 * 2 / 2**30")
    data = nbformat.writes(nbformat.v4.new_notebook(cells=[cell])).encode()
    for folder in (b"honest01", f"honest01{ZWSP}".encode(), b"carol"):
        os.makedirs(os.path.join(os.fsencode(root), folder), exist_ok=True)
    for path in (b"honest01/01_x.ipynb", f"honest01{ZWSP}/01_x.ipynb".encode(),
                 b"carol/01_caf\xe9.ipynb"):
        with open(os.path.join(os.fsencode(root), path), "wb") as f:
            f.write(data)


def _assert_fully_written(out, notebooks):
    """Every report is there, UTF-8 (or ASCII) to its end, with a row per notebook, and the two
    lookalike students flagged on each of their rows."""
    files = {name: (out / name).read_bytes().decode("utf-8") for name in publish.FILES}
    assert "\udce9" not in "".join(files.values())     # a lone surrogate cannot even be written
    assert files["grades.html"].rstrip().endswith("</html>")
    info = json.loads(files["grades.json"])
    assert {r["notebook"] for r in info["notebooks"]} == set(notebooks)
    flagged = {r["student"] for r in info["notebooks"]
               if any("looks the same as" in n for n in r["notes"])}
    assert flagged == {"honest01", f"honest01{ZWSP}"}
    rows = list(csv.reader(io.StringIO(files["grades.csv"])))
    assert len(rows) == 1 + len(notebooks)
    shown = {r[0]: r for r in rows[1:]}
    assert {"honest01", "honest01\\u200b"} <= set(shown)      # two rows that differ visibly
    assert all("looks the same as" in shown[s][-1] for s in ("honest01", "honest01\\u200b"))
    assert shown["carol"][1] == "carol/01_caf\\udce9.ipynb"
    lms = list(csv.reader(io.StringIO(files["grades-lms.csv"])))
    assert lms[0][-1] == "check" and len(lms) == 1 + 3
    assert sorted(r[0] for r in lms[1:] if "looks the same as" in r[-1]) == \
        ["honest01", "honest01\\u200b"]
    assert ZWSP not in files["summary.txt"] and "honest01\\u200b" in files["summary.txt"]


def test_names_with_undecodable_bytes_and_invisible_twins_leave_every_report_whole(tmp_path):
    _awkward_submissions(tmp_path / "subs")
    found = find_submissions(FolderSnapshot(tmp_path / "subs"))
    assert "carol/01_caf\udce9.ipynb" in [s.notebook for s in found]    # as os.fsdecode gives it
    grades = [NotebookGrade(s.student, s.notebook, "01", {"01.weights_gib": "pass"},
                            {"01.weights_gib": "right"}) for s in found]
    warned = []
    paths = publish.write_all(grades, tmp_path / "out", {"warnings": []}, warn=warned.append)
    assert [p.name for p in paths if p.parent.name == "out"] == list(publish.FILES)
    assert warned == []
    _assert_fully_written(tmp_path / "out", [s.notebook for s in found])
    publish.write_all(grades, tmp_path / "again", {"warnings": []})     # flagged once, not twice
    honest = next(g for g in grades if g.student == "honest01")
    assert sum("looks the same as" in n for n in honest.notes) == 1


def test_a_report_that_fails_is_named_and_the_others_are_written(tmp_path, monkeypatch):
    def broken(grades):
        raise UnicodeEncodeError("utf-8", "\udce9", 0, 1, "surrogates not allowed")
    monkeypatch.setattr(publish.report, "csv_text", broken)
    warned = []
    paths = publish.write_all(_grades(), tmp_path, {"warnings": []}, warn=warned.append)
    assert [p.name for p in paths if p.parent == tmp_path] == [n for n in publish.FILES
                                                               if n != "grades.csv"]
    assert not (tmp_path / "grades.csv").exists()
    assert len(warned) == 1 and warned[0].startswith("grades.csv could not be written "
                                                     "(UnicodeEncodeError")
    assert warned == json.loads((tmp_path / "grades.json").read_text())["warnings"]
    assert "grades.csv could not be written" in (tmp_path / "grades.html").read_text()


@pytest.mark.slow
def test_the_grader_writes_every_report_for_awkward_names(tmp_path):
    _awkward_submissions(tmp_path / "subs")
    done = subprocess.run([sys.executable, "-m", "gemmlab_grader", "subs", "--out", "out",
                           "--timeout", "30", *WHERE_IT_WORKS], cwd=tmp_path,
                          capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, GEMMLAB_BACKEND="sim"))
    assert done.returncode == 0, done.stderr
    assert "could not be written" not in done.stderr
    _assert_fully_written(tmp_path / "out", ["carol/01_caf\udce9.ipynb", "honest01/01_x.ipynb",
                                             f"honest01{ZWSP}/01_x.ipynb"])
