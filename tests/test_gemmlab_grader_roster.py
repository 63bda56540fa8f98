"""The roster: folder name -> who the student is in the LMS; a bad file says what is wrong."""
import pytest

from gemmlab_grader import roster


def test_a_roster_maps_folders_to_lms_ids_and_emails(tmp_path):
    (tmp_path / "r.csv").write_text("\ufeffStudent,ID,Email\nalice,101,a@x.edu\n\nbob,102,\n")
    people = roster.read(tmp_path / "r.csv")
    assert people["alice"] == roster.Identity("alice", id="101", email="a@x.edu")
    assert people["bob"].shown == "bob"


@pytest.mark.parametrize("text, message", [
    ("", "empty"), ("name,id\nalice,1\n", "only 'student'"), ("student,grade\na,1\n", "only"),
    ("student,id\nalice,1,2\n", "line 2: 3 cells, expected 2"),
    ("student,id\nalice,1\nalice,2\n", "named twice"), ("student,id\n,1\n", "missing"),
])
def test_a_bad_roster_is_refused_with_the_reason(tmp_path, text, message):
    (tmp_path / "r.csv").write_text(text)
    with pytest.raises(roster.RosterError, match=message):
        roster.read(tmp_path / "r.csv")


def test_the_roster_comes_before_what_a_download_said():
    downloaded = {"smith_1": roster.Identity("smith_1", id="1", name="smith")}
    mine = {"smith_1": roster.Identity("smith_1", email="s@x.edu", name="Smith, J")}
    both = roster.combine(mine, downloaded, {"smith_1", "other"})
    assert both["smith_1"] == roster.Identity("smith_1", id="1", email="s@x.edu", name="Smith, J")
    assert both["other"] == roster.Identity("other")
