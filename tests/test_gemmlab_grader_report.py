"""The reports people read: a students x lessons summary within 100 columns for the whole
course, per-lesson question tables, the CSVs (per notebook, and for an LMS) with untrusted text
escaped or defused."""
import csv
import io

from gemmlab.grading.bank import lesson_questions
from gemmlab_grader import report
from gemmlab_grader.grade import NotebookGrade


def _notebook(student, lesson, passed, note=""):
    ids = lesson_questions(lesson)
    results = {q: "pass" if i < passed else "fail" for i, q in enumerate(ids)}
    g = NotebookGrade(student, f"{student}/{lesson}_x.ipynb", lesson, results,
                      {q: "feedback" for q in ids})
    if note:
        g.notes.append(note)
    return g


def _class():
    """Three students x 16 lessons, one with a very long and hostile name, one missing a lesson."""
    names = ["alice", "bob", "a" * 80 + "\x1b[2J\u202e"]
    grades = [_notebook(s, f"{l:02d}", (i + l) % 5, note="boom" if (s, l) == ("bob", 3) else "")
              for i, s in enumerate(names) for l in range(16) if (s, l) != ("alice", 7)]
    return grades


def test_the_summary_of_16_lessons_fits_100_columns_and_adds_up():
    grades = _class()
    text = report.summary(grades)
    lines = text.splitlines()
    assert max(map(len, lines)) <= 100, max(map(len, lines))
    assert not any(c in text for c in "\x1b\u202e")
    total = sum(len(lesson_questions(l)) for l in range(16))
    assert lines[1].split()[-1] == f"/{total}"
    alice = next(line for line in lines if line.startswith("alice"))
    passed = sum(g.passed for g in grades if g.student == "alice")
    cells = alice.split()
    assert cells[8] == "-"                                     # no notebook for lesson 07
    assert cells[-2:] == [f"{passed}/{total}", f"{100 * passed / total:.1f}"]
    bob = next(line for line in lines if line.startswith("bob"))
    assert bob.split()[-1] == "1"                              # one notebook with notes


def test_lesson_tables_hold_each_lessons_questions_and_notes():
    text = report.lesson_tables(_class())
    assert text.count("lesson ") == 16
    assert f"lesson 04 ({len(lesson_questions('04'))} questions)" in text
    lesson03 = text.split("lesson 03")[1].split("lesson 04")[0]
    assert "boom" in lesson03 and "FAIL" in lesson03
    assert "weights_gib" in text.split("lesson 01")[1].split("lesson 02")[0]


def test_the_lms_csv_has_a_row_per_student_a_column_per_lesson_and_a_total():
    grades = _class()
    rows = list(csv.reader(io.StringIO(report.lms_csv(grades))))
    assert rows[0][0] == "student" and len(rows[0]) == 1 + 16 + 2
    assert rows[0][2] == f"lesson 01 (of {len(lesson_questions(1))})"
    alice = next(r for r in rows if r[0] == "alice")
    assert alice[8] == "0"                                     # lesson 07 not handed in
    assert int(alice[17]) == sum(g.passed for g in grades if g.student == "alice")
    assert sum(int(x) for x in alice[1:17]) == int(alice[17])


def test_the_lms_csv_defuses_formulas_in_student_names():
    rows = list(csv.reader(io.StringIO(report.lms_csv([_notebook("=cmd|' /C calc'!A0", "01", 1)]))))
    assert rows[1][0].startswith("'=")


def test_an_empty_run_says_so():
    assert report.text([]) == "no notebooks graded"
