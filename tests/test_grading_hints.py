"""The hint ladders: every lab and puzzle has three or more hints, none shares a line of code with
the solution, hint() gives them in order and remembers, and a failed check says how many are
left, putting the hint about the named mistake first."""
import json
import re
from pathlib import Path

import pytest

from gemmlab.grading import check, hint, hints, student
from gemmlab.grading.assign import BEGIN, END
from gemmlab.grading.bank import questions
from gemmlab.grading.checker import Result
from gemmlab.grading.hint_ladders import LADDERS

ROOT = Path(__file__).resolve().parent.parent
LABS = sorted(q for q in questions() if re.search(r"\.(lab|puzzle)_", q))


@pytest.fixture(autouse=True)
def student_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("GEMMLAB_STUDENT_DIR", str(tmp_path))
    student.start(tmp_path)
    return tmp_path


def _solution_lines(question_id):
    lesson = question_id.split(".")[0]
    lines = []
    for path in (ROOT / "solutions").glob(f"{lesson}_*.ipynb"):
        for cell in json.loads(path.read_text())["cells"]:
            source = "".join(cell["source"])
            for block in source.split(BEGIN)[1:]:
                lines += [line.strip() for line in block.split(END)[0].splitlines()]
    return [line for line in lines if len(re.sub(r"\s", "", line)) >= 10 and not line.startswith("#")]


def test_every_lab_and_puzzle_has_a_ladder_of_three_or_more():
    assert len(LABS) >= 20
    assert sorted(LADDERS) == LABS
    for question_id, ladder in LADDERS.items():
        assert len(ladder.steps) >= 3, question_id
        for pattern, index in ladder.first_for:
            re.compile(pattern)
            assert 0 <= index < len(ladder.steps), question_id


@pytest.mark.parametrize("question_id", LABS)
def test_no_hint_shares_a_line_of_code_with_the_solution(question_id):
    code = _solution_lines(question_id)
    assert code, f"no solution lines found for {question_id}"
    for text in LADDERS[question_id].steps:
        squeezed = re.sub(r"\s", "", text)
        shared = [line for line in code if re.sub(r"\s", "", line) in squeezed]
        assert not shared, (question_id, shared)


def _shown(capsys, question_id):
    """What hint() prints (it returns None: Jupyter must not show the hint twice)."""
    assert hint(question_id) is None
    return capsys.readouterr().out


def test_hints_come_in_order_are_remembered_and_run_out(capsys, student_folder):
    steps = LADDERS["05.lab_tiled"].steps
    first = _shown(capsys, "05.lab_tiled")
    assert "Hint 1 of 4" in first and steps[0] in first
    assert steps[1] in _shown(capsys, "05.lab_tiled")
    record = json.loads((student_folder / student.PROGRESS).read_text())
    assert record["hints"]["05.lab_tiled"]["given"] == [0, 1]
    assert steps[2] in _shown(capsys, "05.lab_tiled") and steps[3] in _shown(capsys, "05.lab_tiled")
    assert "no hint left" in _shown(capsys, "05.lab_tiled")


def test_the_named_mistake_picks_the_next_hint_and_the_count_is_told(capsys):
    failed = Result("05.lab_tiled", "fail", "The next tile's load overwrote data another thread "
                    "was still reading: put cuda.syncthreads() after the compute loop")
    added = hints.after_check("05.lab_tiled", failed)
    assert "4 hints left" in added and "about this mistake" in added
    assert LADDERS["05.lab_tiled"].steps[2] in _shown(capsys, "05.lab_tiled")  # the missed barrier
    assert LADDERS["05.lab_tiled"].steps[0] in _shown(capsys, "05.lab_tiled")  # then the ladder
    assert student.attempted("05.lab_tiled")


def test_a_failed_check_of_a_lab_says_how_many_hints_are_left(capsys):
    result = check("03.puzzle_map", 3)
    assert result.status == "fail" and "3 hints left: hint('03.puzzle_map')" in result.feedback
    assert "3 hints left" in capsys.readouterr().out
    assert check("03.puzzle_map", ...).status == "not attempted"
    assert student.load()["attempts"]["03.puzzle_map"] == 1          # ... was no attempt


def test_without_a_student_folder_nothing_is_written(tmp_path, monkeypatch):
    monkeypatch.delenv("GEMMLAB_STUDENT_DIR")
    (tmp_path / "repo" / "exercises").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "repo" / "exercises")      # the repository's own exercises/
    hint("03.puzzle_zip")
    assert [p.name for p in (tmp_path / "repo").rglob("*")] == ["exercises"]
    assert student.load()["hints"]["03.puzzle_zip"]["given"] == [0]      # this session only
