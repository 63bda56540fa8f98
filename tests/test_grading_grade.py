"""`gemmlab grade` on a folder of made-up submissions: good, wrong, raising, hanging, broken."""
import hashlib
import json

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from gemmlab.grading import grade
from gemmlab.grading.bank import lesson_questions


def _write(path, *sources):
    path.parent.mkdir(parents=True, exist_ok=True)
    nb = new_notebook(cells=[new_code_cell(s) for s in sources])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)


IMPORT = "from gemmlab.grading import check"


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("submissions")
    _write(root / "alice" / "01_numbers_and_precision.ipynb", IMPORT,
           "check('01.weights_gib', 7e9 * 2 / 2**30)", "check('01.fp16_ones_sum', 4096)")
    _write(root / "bob" / "01_numbers_and_precision.ipynb", IMPORT,
           "check('01.weights_gib', 13.04)", "raise ZeroDivisionError('oops')",
           "check('01.fp16_ones_sum', 2048)")
    _write(root / "carol" / "01_numbers_and_precision.ipynb", IMPORT,
           "check('01.weights_gib', 13.04)", "import time; time.sleep(60)",
           "check('01.fp16_ones_sum', 2048)")
    (root / "dave").mkdir()
    (root / "dave" / "01_numbers_and_precision.ipynb").write_text("{ not json", encoding="utf-8")
    digest = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*") if p.is_file()}
    out = tmp_path_factory.mktemp("grades")
    status = grade.main(root, out=out, timeout=8)
    return root, digest, out, status


def _rows(out):
    return {row["student"]: row for row in json.loads((out / "grades.json").read_text())}


def test_exit_status_and_reports(graded):
    root, _, out, status = graded
    assert status == 0
    assert (out / "grades.csv").read_text().splitlines()[0].startswith("student,notebook,01.")
    assert set(_rows(out)) == {"alice", "bob", "carol", "dave"}


def test_every_lesson_question_gets_a_verdict(graded):
    rows = _rows(graded[2])
    for row in rows.values():
        assert set(row["results"]) >= set(lesson_questions(1))


def test_pass_fail_and_not_attempted(graded):
    alice = _rows(graded[2])["alice"]["results"]
    assert alice["01.weights_gib"] == "pass"
    assert alice["01.fp16_ones_sum"] == "fail"
    # questions the notebook never checks count as not attempted, not as errors
    others = set(lesson_questions(1)) - {"01.weights_gib", "01.fp16_ones_sum"}
    assert all(alice[q] == "not attempted" for q in others)


def test_a_raising_cell_keeps_earlier_and_later_checks(graded):
    bob = _rows(graded[2])["bob"]
    assert "ZeroDivisionError" in bob["error"]
    assert bob["results"]["01.weights_gib"] == "pass"
    assert bob["results"]["01.fp16_ones_sum"] == "pass"


def test_a_hanging_notebook_fails_what_it_did_not_reach(graded):
    carol = _rows(graded[2])["carol"]
    assert "8 s" in carol["error"]
    assert carol["results"]["01.weights_gib"] == "pass"
    assert carol["results"]["01.fp16_ones_sum"] == "fail"
    assert "not checked" in carol["feedback"]["01.fp16_ones_sum"]


def test_invalid_json_fails_every_question_with_the_reason(graded):
    dave = _rows(graded[2])["dave"]
    assert "not a valid notebook" in dave["error"]
    assert dave["passed"] == 0
    assert all(s == "fail" for s in dave["results"].values())


def test_submissions_are_not_modified(graded):
    root, digest, _, _ = graded
    now = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in root.rglob("*") if p.is_file()}
    assert now == digest


def test_out_inside_submissions_is_refused(tmp_path):
    _write(tmp_path / "x" / "01_a.ipynb", IMPORT)
    assert grade.main(tmp_path, out=tmp_path / "grades") == 2
    assert not (tmp_path / "grades").exists()
