"""Every lesson notebook, run from top to bottom in JupyterLab as a student runs it: no error on
the page, every code cell executed, every widget rendered as a widget and answering its control.
Widget screenshots go to ``artifacts/lessons/<lesson>/``."""
import os

import pytest

from .lab import ROOT
from .notebook_ui import (error_outputs, open_notebook, run_all_cells, unexecuted_code_cells,
                          wait_until_settled, widget_views)
from .widget_ui import poke, rendered_state, wait_for_change

LESSONS = sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb"))
LESSON_TIMEOUT_S = int(os.environ.get("GEMMLAB_E2E_LESSON_TIMEOUT", "300"))


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_lesson_runs_in_jupyterlab(page, lab, artifacts, path):
    committed = path.read_bytes()
    open_notebook(page, lab, f"notebooks/{path.name}")      # the student's copy of it
    run_all_cells(page, LESSON_TIMEOUT_S)

    errors = error_outputs(page)
    assert not errors, f"{path.name} shows errors:\n\n" + "\n\n".join(e[-1500:] for e in errors)
    skipped = unexecuted_code_cells(page)
    assert not skipped, f"{path.name}: code cells {skipped} did not run"

    shots = artifacts / "lessons" / path.stem
    shots.mkdir(parents=True, exist_ok=True)
    for n, view in enumerate(widget_views(page), start=1):
        view.screenshot(path=shots / f"widget-{n}.png")
        before = rendered_state(view)
        assert poke(view), f"{path.name}: widget {n} has no slider, drop-down or button to use"
        wait_for_change(view, before)
        wait_until_settled(page, LESSON_TIMEOUT_S)
        view.screenshot(path=shots / f"widget-{n}-after.png")

    assert path.read_bytes() == committed, f"{path.name} was modified on disk by the test"
