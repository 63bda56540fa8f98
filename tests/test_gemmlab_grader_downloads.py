"""Submissions as Canvas and Moodle download them: the names read, and a Canvas download graded
by the command into a Canvas import file (IDs from the file names, the Points Possible row, the
instructor's points) and a Moodle download read as one student per folder."""
import csv
import io
import json
import os

import pytest

from gemmlab.grading.bank import get_question, lesson_questions
from gemmlab_grader import downloads
from gemmlab_grader.folders import FolderSnapshot
from gemmlab_grader.submissions import find_submissions, lesson_of, one_per_lesson
from test_gemmlab_grader_grade import _cli, _write

LESSON01 = "01_numbers_and_precision.ipynb"


@pytest.mark.parametrize("parts, student, user, name, remark", [
    (["smithjohn_1234_98765_" + LESSON01], "smithjohn_1234", "1234", LESSON01, ""),
    (["doejane_LATE_5678_98766_" + LESSON01], "doejane_5678", "5678", LESSON01, "LATE"),
    (["smithjohn_1234_98767_01_numbers_and_precision-1.ipynb"], "smithjohn_1234", "1234",
     LESSON01, ""),                                   # Canvas's -1 for a name handed in again
    (["Jane Doe_4321_assignsubmission_file_", LESSON01], "Jane Doe_4321", "4321", LESSON01, ""),
    (["Jane Doe_4321_assignsubmission_file", "sub", "x.ipynb"], "Jane Doe_4321", "4321",
     "x.ipynb", ""),
])
def test_lms_file_and_folder_names_give_the_student_their_id_and_their_file_name(
        parts, student, user, name, remark):
    found = downloads.read(parts)
    lms_id = found.identity.id or found.identity.participant        # Canvas's, Moodle's
    assert (found.student, lms_id, found.name) == (student, user, name)
    assert remark in found.remark and bool(found.remark) == bool(remark)


@pytest.mark.parametrize("parts", [["alice", LESSON01], [LESSON01], ["smith_12_x.ipynb"],
                                   ["Jane Doe_4321_assignsubmission_onlinetext_", "a.ipynb"]])
def test_other_names_are_not_taken_for_a_download(parts):
    assert downloads.read(parts) is None


def _canvas_download(folder):
    """What Canvas's "Download Submissions" unzips to, for lesson 01: one flat folder."""
    _write(folder / f"smithjohn_1234_98765_{LESSON01}", "weights_gib = 1.0")          # older
    _write(folder / "smithjohn_1234_98767_01_numbers_and_precision-1.ipynb",
           "weights_gib = 7e9 * 2 / 2**30")                                            # newer
    _write(folder / f"doejane_LATE_5678_98766_{LESSON01}", "weights_gib = 7e9 * 2 / 2**30")
    os.utime(folder / f"smithjohn_1234_98765_{LESSON01}", (1_700_000_000, 1_700_000_000))


def test_a_canvas_download_is_read_as_students_with_lessons_and_the_newest_counts(tmp_path):
    _canvas_download(tmp_path)
    found = one_per_lesson(find_submissions(FolderSnapshot(tmp_path)))
    assert sorted((s.student, lesson_of(s)) for s in found) == [("doejane_5678", "01"),
                                                               ("smithjohn_1234", "01")]
    smith = next(s for s in found if s.student == "smithjohn_1234")
    assert smith.notebook.endswith("-1.ipynb") and "not graded: smithjohn_1234_98765" in \
        smith.remarks[0]


@pytest.fixture(scope="module")
def canvas_graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("canvas")
    _canvas_download(root / "download")
    (root / "points.toml").write_text('"01.weights_gib" = 10\n')
    done = _cli("download", "--out", "out", "--timeout", "30", "--points", "points.toml",
                cwd=root)
    assert done.returncode == 0, done.stderr
    return root / "out", done


def test_the_canvas_import_file_has_the_ids_the_points_possible_row_and_the_points(canvas_graded):
    out, _ = canvas_graded
    rows = list(csv.reader(io.StringIO((out / "gradebook-canvas.csv").read_text())))
    assert rows[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                       "gemmlab lesson 01"]
    possible = 10 + sum(get_question(q).points for q in lesson_questions("01")
                        if q != "01.weights_gib")
    assert rows[1] == ["Points Possible", "", "", "", "", str(possible)]
    by_id = {r[1]: r for r in rows[2:]}
    assert sorted(by_id) == ["1234", "5678"]
    assert by_id["1234"][-1] == "10" and by_id["5678"][-1] == "10"   # the newer notebook counted


def test_the_late_flag_and_the_ungraded_copy_are_noted_in_the_students_feedback(canvas_graded):
    out, _ = canvas_graded
    rows = {r["student"]: r for r in json.loads((out / "grades.json").read_text())["notebooks"]}
    assert "Canvas marked this submission LATE" in rows["doejane_5678"]["notes"]
    assert any("not graded: smithjohn_1234_98765" in n for n in rows["smithjohn_1234"]["notes"])
    smith = next((out / "students").glob("smithjohn_1234-*.txt")).read_text()
    assert "not graded: smithjohn_1234_98765" in smith


def test_a_moodle_download_is_one_student_per_folder(tmp_path):
    _write(tmp_path / "Jane Doe_4321_assignsubmission_file_" / LESSON01, "x = 1")
    _write(tmp_path / "Li Wei_4400_assignsubmission_file_" / "work" / LESSON01, "x = 1")
    found = find_submissions(FolderSnapshot(tmp_path))
    assert sorted((s.student, s.identity.participant, lesson_of(s)) for s in found) == [
        ("Jane Doe_4321", "4321", "01"), ("Li Wei_4400", "4400", "01")]
