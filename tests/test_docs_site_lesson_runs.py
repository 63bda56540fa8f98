"""Every lesson runs from top to bottom on the simulator, as the site builder runs it (a fresh
local kernel, the limit per cell, figures inline): a cell that raises or stalls fails the lesson,
naming the cell. Each executed lesson is kept for the site builder (docs/site/lesson_runs.py), so
that CI runs a lesson once here and once in JupyterLab (tests/e2e/test_lessons.py), not a third
time to build the site. On a GPU, `make gpu-test` runs the lessons through nbval instead."""
import sys
from pathlib import Path

import nbformat
import pytest

from gemmlab import device, notebook_run

# nbconvert comes with JupyterLab (so with `make test`), not with a bare GPU image's Python
pytest.importorskip("nbconvert", reason="the site builder needs nbconvert")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "docs" / "site"))
import build  # noqa: E402  (docs/site is not a package)
import lesson_runs  # noqa: E402

pytestmark = pytest.mark.skipif(device.backend() != "sim", reason="the simulator's run of the "
                                "lessons: on a GPU, make gpu-test runs them through nbval")


@pytest.mark.parametrize("path", build.lessons(), ids=lambda p: p.stem)
def test_the_lesson_runs_to_the_end_and_is_kept_for_the_site(path, monkeypatch):
    lesson_runs.set_environment(monkeypatch.setenv,
                                lambda name: monkeypatch.delenv(name, raising=False))
    executed = notebook_run.execute(path)           # raises NotebookFailure, naming the cell
    code = [cell for cell in executed.cells if cell.cell_type == "code"]
    assert code and all(cell.execution_count for cell in code), f"{path.name}: a cell did not run"
    lesson_runs.keep(path, executed)
    assert lesson_runs.kept(path) == nbformat.from_dict(executed)
