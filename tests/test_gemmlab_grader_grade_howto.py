"""docs/grade-a-class.md followed step by step: its shell blocks run in order, as written, on a
tiny class downloaded from Canvas (two students, one late, one with a second notebook), and
what the doc says comes out does: a Canvas import file with the students' ids, a feedback file
per student, a regrade with the same verdicts, a Gradescope autograder."""
import csv
import io
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from test_gemmlab_grader_sandbox import WORKS_HERE

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "grade-a-class.md"
L01 = "01_numbers_and_precision.ipynb"
pytestmark = pytest.mark.skipif(not WORKS_HERE, reason="bubblewrap is not installed")


def shell_blocks(path):
    """The ```bash blocks of a Markdown file, in order."""
    return re.findall(r"^```bash\n(.*?)^```", path.read_text(), re.M | re.S)


def run_blocks(blocks, cwd):
    """Run each block with bash -e in ``cwd``, with the course's commands on PATH and this
    checkout first on the module path; the completed processes."""
    env = dict(os.environ, GEMMLAB_BACKEND="sim",
               PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    done = []
    for block in blocks:
        done.append(subprocess.run(["bash", "-e", "-c", block], cwd=cwd, env=env,
                                   capture_output=True, text=True, timeout=900))
        assert done[-1].returncode == 0, (block, done[-1].stderr[-3000:])
    return done


def _notebook(source):
    return nbformat.writes(new_notebook(cells=[new_code_cell(source)]))


@pytest.fixture(scope="module")
def followed(tmp_path_factory):
    root = tmp_path_factory.mktemp("instructor")
    with zipfile.ZipFile(root / "submissions.zip", "w") as z:      # as Canvas names them
        z.writestr(f"smithjohn_1234_98765_{L01}", _notebook("weights_gib = 1.0"))
        z.writestr(f"smithjohn_1234_98767_{L01[:-6]}-1.ipynb",
                   _notebook("weights_gib = 7e9 * 2 / 2**30"))
        z.writestr(f"doejane_LATE_5678_98766_{L01}", _notebook("weights_gib = 7"))
    return root, run_blocks(shell_blocks(DOC), root)


def test_the_doc_has_the_steps_an_instructor_runs():
    commands = "\n".join(shell_blocks(DOC))
    for step in ("unzip", "gemmlab grade submissions", "--seed-file", "gemmlab-grade gradescope"):
        assert step in commands, step


def test_the_canvas_file_imports_with_the_ids_from_the_download(followed):
    root, _ = followed
    rows = list(csv.reader(io.StringIO((root / "grades" / "gradebook-canvas.csv").read_text())))
    assert rows[1][0] == "Points Possible"
    assert {r[1]: r[-1] for r in rows[2:]} == {"1234": "4", "5678": "0"}   # points.toml: 4


def test_each_student_has_a_feedback_file_and_the_late_one_is_noted(followed):
    root, _ = followed
    files = sorted(p.name for p in (root / "grades" / "students").iterdir())
    assert len(files) == 4 and all(f.startswith(("doejane_5678-", "smithjohn_1234-")) for f in files)
    jane = next((root / "grades" / "students").glob("doejane_5678-*.txt")).read_text()
    assert "LATE" in jane and "smithjohn" not in jane


def test_the_regrade_gives_the_same_verdicts(followed):
    root, _ = followed
    first, again = (json.loads((root / d / "grades.json").read_text())["notebooks"]
                    for d in ("grades", "regrade"))
    assert [(r["student"], r["results"], r["feedback"]) for r in first] == \
        [(r["student"], r["results"], r["feedback"]) for r in again]


def test_the_summary_printed_fits_100_columns(followed):
    _, done = followed
    grading = next(d for d in done if "gemmlab grade: " in d.stderr)
    summary = grading.stdout.split("\n\nwritten into")[0]
    assert summary and max(map(len, summary.splitlines())) <= 100


def test_the_gradescope_autograder_is_built(followed):
    root, _ = followed
    assert {"setup.sh", "run_autograder"} <= set(zipfile.ZipFile(root / "autograder.zip").namelist())
