"""The reports written: every file, the HTML page with each student's feedback and each
question's pass rate, everything from a submission escaped, and a replaced output folder."""
import html
import json
import re

from gemmlab_grader import publish
from gemmlab_grader.grade import NotebookGrade

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
    assert [p.name for p in paths] == list(publish.FILES)
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
