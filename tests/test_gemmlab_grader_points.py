"""Points: the bank's default by kind, an instructor's file (JSON or TOML) over it, a bad file
refused with the reason."""
import pytest

from gemmlab.grading.bank import get_question, questions
from gemmlab_grader import points


def test_the_bank_counts_a_lab_over_code_over_a_value_over_a_choice():
    worth = {q: get_question(q).points for q in ("05.lab_tiled", "07.lab_ring", "02.naive_matmul",
                                                  "01.weights_gib", "02.b_row_stride_reason")}
    assert worth == {"05.lab_tiled": 5, "07.lab_ring": 5, "02.naive_matmul": 3,
                     "01.weights_gib": 2, "02.b_row_stride_reason": 1}


@pytest.mark.parametrize("name, text", [("p.json", '{"07.lab_ring": 10, "03": 0.5}'),
                                        ("p.toml", '"07.lab_ring" = 10\n"03" = 0.5\n')])
def test_a_file_overrides_questions_and_lessons_and_the_rest_keep_their_default(tmp_path, name,
                                                                                text):
    (tmp_path / name).write_text(text)
    bank = questions()
    table = points.table(bank, points.read(tmp_path / name, bank))
    assert table["07.lab_ring"] == 10 and table["03.puzzle_map"] == 0.5
    assert table["07.ring_send_mib"] == get_question("07.ring_send_mib").points


@pytest.mark.parametrize("name, text, message", [
    ("p.json", '{"07.nope": 1}', "no question or lesson"), ("p.json", '{"99": 1}', "no question"),
    ("p.json", '{"07.lab_ring": -1}', "from 0 to 1000"),
    ("p.json", '{"07.lab_ring": "ten"}', "from 0 to 1000"),
    ("p.json", '[1]', "expected a table"), ("p.json", "{", "not JSON"),
    ("p.toml", "x = = 1", "not TOML"), ("missing.toml", None, "cannot be read"),
])
def test_a_bad_points_file_is_refused_with_the_reason(tmp_path, name, text, message):
    if text is not None:
        (tmp_path / name).write_text(text)
    with pytest.raises(points.PointsError, match=message):
        points.read(tmp_path / name, questions())
