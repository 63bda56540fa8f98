"""The reports people read: a students x lessons summary of points within 100 columns for the
whole course, per-lesson question tables, the CSV per notebook with untrusted text escaped or
defused (the gradebooks are in test_gemmlab_grader_gradebook.py)."""
from gemmlab.grading.bank import get_question, lesson_questions
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
    total = sum(get_question(q).points for l in range(16) for q in lesson_questions(l))
    assert lines[1].split()[-1] == f"/{total}"
    alice = next(line for line in lines if line.startswith("alice"))
    passed = sum(get_question(q).points for g in grades if g.student == "alice"
                 for q, s in g.results.items() if s == "pass")
    cells = alice.split()
    assert cells[8] == "-"                                     # no notebook for lesson 07
    assert cells[-2:] == [f"{passed}/{total}", f"{100 * passed / total:.1f}"]
    bob = next(line for line in lines if line.startswith("bob"))
    assert bob.split()[-1] == "1"                              # one notebook with notes


def test_lesson_tables_hold_each_lessons_questions_and_notes():
    text = report.lesson_tables(_class())
    assert text.count("lesson ") == 16
    worth = sum(get_question(q).points for q in lesson_questions("04"))
    assert f"lesson 04 ({len(lesson_questions('04'))} questions, {worth} points)" in text
    lesson03 = text.split("lesson 03")[1].split("lesson 04")[0]
    assert "boom" in lesson03 and "FAIL" in lesson03
    assert "weights_gib" in text.split("lesson 01")[1].split("lesson 02")[0]


def test_the_csv_defuses_formulas_in_student_names():
    rows = report.csv_text([_notebook("=cmd|' /C calc'!A0", "01", 1)]).splitlines()
    assert rows[1].startswith("'=")


def test_an_empty_run_says_so():
    assert report.text([]) == "no notebooks graded"
