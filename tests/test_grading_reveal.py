"""reveal(): the worked answer with its explanation, only after an attempt, once confirmed, noted
in the student's progress; a class release has none and says so."""
import pytest

from gemmlab import course
from gemmlab.grading import check, reveal, student
from gemmlab.grading.handout import RELEASE_MARK


@pytest.fixture(autouse=True)
def student_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("GEMMLAB_STUDENT_DIR", str(tmp_path))
    student.start(tmp_path)


def test_nothing_before_an_attempt(capsys):
    assert reveal("05.lab_naive", yes=True) is None
    assert "try it first" in capsys.readouterr().out
    assert student.revealed() == []


def test_after_an_attempt_it_asks_once_then_shows_and_records(monkeypatch, capsys):
    check("05.lab_naive", 3)
    asked = []
    monkeypatch.setattr("builtins.input", lambda prompt: asked.append(prompt) or "n")
    assert reveal("05.lab_naive") is None and len(asked) == 1
    assert student.revealed() == []
    monkeypatch.setattr("builtins.input", lambda prompt: asked.append(prompt) or "y")
    capsys.readouterr()
    assert reveal("05.lab_naive") is None          # printed once: Jupyter shows no value again
    text = capsys.readouterr().out
    assert "def lab_naive(A, B, C):" in text and "acc += A[row, k] * B[k, col]" in text
    assert "### BEGIN SOLUTION" not in text and "Why it works" in text
    assert student.revealed() == ["05.lab_naive"]
    reveal("05.lab_naive")
    assert len(asked) == 2                                          # asked once: not again


def test_a_value_question_shows_its_cell_and_explanation(capsys):
    check("00.matrix_mib", 1)
    capsys.readouterr()
    reveal("00.matrix_mib", yes=True)
    shown = capsys.readouterr().out
    assert "Worked answer of 00.matrix_mib" in shown and "matrix_mib =" in shown


def test_a_class_release_ships_no_answers(tmp_path, monkeypatch, capsys):
    (tmp_path / RELEASE_MARK).write_text("")
    monkeypatch.setattr(course, "root", lambda: tmp_path)
    check("05.lab_naive", 3)
    assert reveal("05.lab_naive", yes=True) is None
    assert "class release" in capsys.readouterr().out


def test_an_install_without_solutions_says_so(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(course, "root", lambda: tmp_path)
    check("05.lab_naive", 3)
    assert reveal("05.lab_naive", yes=True) is None
    assert "no worked answers" in capsys.readouterr().out
