"""Each course widget in JupyterLab: it renders as a widget, and working its control changes what
it shows as it should (see ``widget_cases``). All cases share one generated notebook and kernel;
screenshots before and after go to ``artifacts/widgets/``."""
import nbformat
import pytest
from playwright.sync_api import expect

from .notebook_ui import (WIDGET_VIEW, code_cell, error_outputs, open_notebook, run_all_cells,
                          wait_until_settled)
from .widget_cases import CASES
from .widget_ui import figures, wait_for_change


def _normalised(text):
    return " ".join(text.split())


def write_widget_notebook(path):
    """A notebook with one cell per case, the widget as the cell's last expression."""
    cells = [nbformat.v4.new_code_cell(f"{case.marker}\n{case.code}") for case in CASES]
    nb = nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": {
        "name": "python3", "display_name": "Python 3", "language": "python"}})
    nbformat.write(nb, path)


@pytest.fixture(scope="module")
def widget_page(open_page, lab):
    path = lab.root / "widgets.ipynb"
    write_widget_notebook(path)
    with open_page("widgets") as page:
        open_notebook(page, lab, path)
        run_all_cells(page, timeout_s=300)
        errors = error_outputs(page)
        assert not errors, "the widget notebook shows errors:\n\n" + "\n\n".join(errors)
        yield page


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_widget_answers_its_control(widget_page, artifacts, case):
    view = code_cell(widget_page, case.marker).locator(WIDGET_VIEW).first
    view.wait_for()
    shots = artifacts / "widgets"
    shots.mkdir(exist_ok=True)
    view.screenshot(path=shots / f"{case.name}-before.png")
    drawn = figures(view)
    if case.shows:
        assert case.shows not in _normalised(view.inner_text()), "expected text shown too early"
    if case.redraws:
        assert drawn, "the widget shows no figure"

    case.act(view)

    if case.shows:
        expect(view).to_contain_text(case.shows, timeout=20_000)
    if case.redraws:
        wait_for_change(view, drawn, state=figures)
    wait_until_settled(widget_page, 60)
    view.screenshot(path=shots / f"{case.name}-after.png")
