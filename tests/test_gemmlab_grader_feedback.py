"""Each student's feedback, as the instructor forwards it: a class of three graded by the
command, then each student's .txt and .html read back: every question of theirs with its
verdict, points and feedback, their total, and nothing of a classmate's (name or answers)."""
import html
import json

import pytest

from gemmlab.grading.bank import get_question, lesson_questions
from gemmlab_grader.feedback import FOLDER, file_stem
from test_gemmlab_grader_grade import _cli, _write

# each student's answers differ, so that one leaking into another's file would show
CLASS = {"alice": "weights_gib = 7e9 * 2 / 2**30\nstored = 'alice-was-here'",
         "bob": "weights_gib = 4242.125",
         "carol": "weights_gib = 'carol-typed-words'"}
NAMES = {"carol": "01_numbers_and_precision.ipynb"}     # the exercises' former name: her work/
                                                        # folder was made before the rename


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("class")
    for student, source in CLASS.items():
        name = NAMES.get(student, "01_numbers_and_precision_exercises.ipynb")
        _write(root / "subs" / student / name, source)
    done = _cli("subs", "--out", "out", "--timeout", "30", "--seed", "5", cwd=root)
    assert done.returncode == 0, done.stderr
    return root / "out", done


def _read(out, student, suffix):
    return (out / FOLDER / (file_stem(student) + suffix)).read_text()


@pytest.mark.parametrize("suffix", [".txt", ".html"])
def test_each_student_gets_their_questions_points_and_total_and_nothing_of_a_classmate(graded,
                                                                                     suffix):
    out, _ = graded
    rows = {r["student"]: r for r in json.loads((out / "grades.json").read_text())["notebooks"]}
    for student in CLASS:
        text = html.unescape(_read(out, student, suffix))
        assert f"for {student}" in text
        for q in lesson_questions("01"):
            assert q in text                                     # every question is named
            assert rows[student]["feedback"][q][:60] in text     # with its feedback
        total = sum(get_question(q).points for q in lesson_questions("01"))
        assert f"{rows[student]['score']} of {total} points" in text
        for other in set(CLASS) - {student}:
            assert other not in text, (student, other)
        for other, answer in CLASS.items():
            if other != student:
                assert answer.split("= ")[-1].strip("'") not in text, (student, other)


def test_verdicts_and_points_per_question_are_in_the_text_file(graded):
    out, _ = graded
    alice, bob = _read(out, "alice", ".txt"), _read(out, "bob", ".txt")
    assert "01.weights_gib: pass (2/2 points)" in alice
    assert "01.weights_gib: fail (0/2 points)" in bob
    # the feedback names what carol handed in: in her file, and in nobody else's (above)
    assert "got str 'carol-typed-words'" in _read(out, "carol", ".txt")


def test_a_notebook_under_the_exercises_former_name_is_graded_and_named(graded):
    out, _ = graded
    text = _read(out, "carol", ".txt")
    assert "carol/01_numbers_and_precision.ipynb (lesson 01)" in text
    assert "01.weights_gib: fail (0/2 points)" in text
    assert "alice/01_numbers_and_precision_exercises.ipynb (lesson 01)" in \
        _read(out, "alice", ".txt")


def test_a_questions_options_show_one_a_line_not_as_escapes(graded):
    """A prompt's line breaks (a choice question's options) are line breaks in the file, where a
    student reads them, not a printed backslash-n."""
    out, _ = graded
    text = _read(out, "bob", ".txt")
    assert "\\n" not in text
    assert any(line.strip().startswith("a) ") for line in text.splitlines())
    assert "<br>" in _read(out, "bob", ".html")


def test_the_run_prints_a_summary_within_100_columns_and_names_the_feedback_folder(graded):
    _, done = graded
    assert max(map(len, done.stdout.splitlines())) <= 100
    assert "each student's feedback" in done.stdout
