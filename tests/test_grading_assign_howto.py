"""docs/add-a-question.md followed step by step in a copy of the repository: the question
written into the bank by the doc's shell block, the worked answer added to the solutions
notebook as a cell (what the instructor does in JupyterLab), then the doc's commands: the
exercise regenerated with the question's blank, and the solutions graded at full marks on it."""
import json
import shutil
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell

from test_gemmlab_grader_grade_howto import run_blocks, shell_blocks

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "add-a-question.md"
COPIED = ("gemmlab", "gemmlab_grader", "solutions", "exercises", "notebooks", "benchmarks")


def python_blocks(path):
    return [b.split("```")[0] for b in path.read_text().split("```python\n")[1:]]


@pytest.fixture(scope="module")
def followed(tmp_path_factory):
    if shutil.which("gemmlab", path=str(Path(sys.executable).parent)) is None:
        pytest.skip("the gemmlab command is not installed beside this Python (a checkout on "
                    "PYTHONPATH, as on the GPU image): the doc's commands call it")
    repo = tmp_path_factory.mktemp("repo")
    for part in COPIED:
        shutil.copytree(ROOT / part, repo / part, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(ROOT / "pyproject.toml", repo / "pyproject.toml")
    bank, check = shell_blocks(DOC)[:2]
    done = run_blocks([bank], repo)
    notebook = repo / "solutions" / "01_numbers_and_precision_exercises.ipynb"     # step 2, by hand
    nb = nbformat.read(notebook, as_version=4)
    nb.cells.append(new_code_cell(python_blocks(DOC)[0].strip()))
    nbformat.write(nb, notebook)
    done += run_blocks([check], repo)
    return repo, done


def test_the_new_question_is_in_the_bank_with_its_default_points(followed):
    _, done = followed
    assert done[0].stdout.strip() == "2"                    # a value: 2 points


def test_the_exercise_is_regenerated_with_a_blank_for_it(followed):
    repo, _ = followed
    exercise = (repo / "exercises" / "01_numbers_and_precision_exercises.ipynb").read_text()
    assert 'check(\\"01.weights_int8_gib\\", weights_int8_gib)' in exercise   # asked
    assert "weights_int8_gib = 7e9 * 1 / 2**30" not in exercise and "BEGIN SOLUTION" not in exercise


def test_the_solutions_graded_pass_the_new_question(followed):
    repo, _ = followed
    rows = json.loads((repo / "agree-grades" / "grades.json").read_text())["notebooks"]
    assert rows[0]["results"]["01.weights_int8_gib"] == "pass"


def test_the_doc_leaves_the_real_repository_alone(followed):
    assert "01.weights_int8_gib" not in (ROOT / "gemmlab" / "grading" / "bank" / "l01.py").read_text()
