"""Gradebooks an LMS imports, from a graded class and a roster: Canvas's layout (the five
identity columns, the Points Possible row second), Moodle's (email and ID number to map), the
generic one; a student on the roster who handed nothing in gets 0, not a missing row."""
import csv
import io

from gemmlab.grading.bank import get_question, lesson_questions
from gemmlab_grader import gradebook, roster
from gemmlab_grader.grade import NotebookGrade


def _grade(student, lesson, passed):
    ids = lesson_questions(lesson)
    return NotebookGrade(student, f"{student}/{lesson}_x.ipynb", lesson,
                         {q: "pass" if q in passed else "fail" for q in ids}, {})


def _class(tmp_path):
    grades = [_grade("alice", "01", {"01.weights_gib"}), _grade("alice", "02", set()),
              _grade("bob", "01", {"01.weights_gib", "01.weights_fp32_gib"})]
    (tmp_path / "roster.csv").write_text(
        "student,id,email,name,section,sis_user_id,sis_login_id\n"
        "alice,101,alice@uni.edu,\"Liddell, Alice\",S1,A-101,aliddell\n"
        "bob,102,bob@uni.edu,\"Builder, Bob\",S2,B-102,bbuilder\n"
        "zoe,103,zoe@uni.edu,\"Zed, Zoe\",S1,Z-103,zzed\n")
    people = roster.combine(roster.read(tmp_path / "roster.csv"), {}, {"alice", "bob"})
    return grades, people


def _rows(text):
    return list(csv.reader(io.StringIO(text)))


def _worth(lesson):
    return sum(get_question(q).points for q in lesson_questions(lesson))


def test_canvas_has_its_identity_columns_the_points_possible_row_and_everyone(tmp_path):
    grades, people = _class(tmp_path)
    rows = _rows(gradebook.canvas(grades, people))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                       "gemmlab lesson 01", "gemmlab lesson 02"]
    assert rows[1] == ["Points Possible", "", "", "", "", str(_worth("01")), str(_worth("02"))]
    assert rows[2:] == [["Liddell, Alice", "101", "A-101", "aliddell", "S1", "2", "0"],
                        ["Builder, Bob", "102", "B-102", "bbuilder", "S2", "4", "0"],
                        ["Zed, Zoe", "103", "Z-103", "zzed", "S1", "0", "0"]]


def test_moodle_has_email_and_id_number_to_map_and_a_total(tmp_path):
    grades, people = _class(tmp_path)
    rows = _rows(gradebook.moodle(grades, people))
    assert rows[0][:4] == ["Email address", "ID number", "Identifier", "Full name"]
    assert rows[0][-1] == f"gemmlab total (of {_worth('01') + _worth('02')})"
    bob = next(r for r in rows if r[0] == "bob@uni.edu")
    assert bob[1:4] == ["B-102", "", "Builder, Bob"] and bob[4:] == ["4", "0", "4"]
    jane = roster.Identity("Jane Doe_4321", name="Jane Doe", participant="4321")  # downloaded
    row = _rows(gradebook.moodle(grades, {"Jane Doe_4321": jane}))[1]
    assert row[2:4] == ["Participant 4321", "Jane Doe"]


def test_the_generic_gradebook_takes_its_ids_from_the_roster(tmp_path):
    grades, people = _class(tmp_path)
    rows = _rows(gradebook.generic(grades, people))
    assert rows[0][:3] == ["student", "id", "email"]
    assert rows[1][:3] == ["alice", "101", "alice@uni.edu"]
    assert rows[3][0] == "zoe" and rows[3][-2:] == ["0", "0.0"]


def test_students_no_lms_can_match_are_named_in_a_warning():
    people = roster.combine({}, {}, {"alice", "bob"})
    assert "2 student(s) have no LMS id or email" in gradebook.missing_ids(people)
    assert "--roster" in gradebook.missing_ids(people)
    assert gradebook.missing_ids({"a": roster.Identity("a", email="a@x")}) == ""
