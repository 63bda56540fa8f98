"""The course's own notebooks graded by `gemmlab grade` against the bank: each solutions notebook
passes every question of its lesson, and each exercise notebook runs through with every question
"not attempted"."""
from pathlib import Path

import pytest

from gemmlab.grading.bank import lesson_questions
from gemmlab_grader import sandbox
from gemmlab_grader.grade import Settings, grade_notebook

ROOT = Path(__file__).resolve().parent.parent

# The sandbox where bubblewrap works, else --trusted (these notebooks are the course's own).
GRADING = Settings(timeout=300, seed=1, sandbox=sandbox.bwrap() is not None)
TRUSTED = Settings(timeout=300, seed=1, sandbox=False)


def _notebooks(folder):
    return sorted((ROOT / folder).glob("[0-9][0-9]_*.ipynb"))


@pytest.mark.parametrize("path", _notebooks("solutions"), ids=lambda p: p.stem)
def test_graded_solutions_pass_every_question_of_their_lesson(path):
    grade = grade_notebook(path, settings=GRADING)
    assert not grade.notes, grade.notes
    wanted = lesson_questions(path.name[:2])
    assert wanted, f"lesson {path.name[:2]} has no questions in the bank"
    failing = {q: grade.feedback[q] for q in wanted if grade.results[q] != "pass"}
    assert not failing, failing


@pytest.mark.parametrize("path", _notebooks("exercises"), ids=lambda p: p.stem)
def test_graded_exercises_run_through_unanswered(path):
    grade = grade_notebook(path, settings=GRADING)
    assert not grade.notes, grade.notes
    answered = {q: s for q, s in grade.results.items() if s != "not attempted"}
    assert not answered, answered


@pytest.mark.parametrize("path", [p for p in _notebooks("solutions") if p.name[:2] in ("02", "05")],
                         ids=lambda p: p.stem)
def test_trusted_grades_the_solutions_at_full_marks_without_the_sandbox(path):
    grade = grade_notebook(path, settings=TRUSTED)
    assert not grade.notes, grade.notes
    assert set(grade.results.values()) == {"pass"}, grade.feedback
