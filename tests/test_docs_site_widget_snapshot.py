"""The static site's widget snapshots (docs/site/widget_snapshot.py), on a hand-made widget state:
controls show their values, HTML parts and Output figures are kept, a note says it is static."""
import sys
from pathlib import Path

import nbformat
import pytest

# nbconvert comes with JupyterLab (so with `make test`), not with a bare GPU image's Python
pytest.importorskip("nbconvert", reason="the site builder needs nbconvert")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "docs" / "site"))
from widget_snapshot import STATE, VIEW, WidgetSnapshotPreprocessor  # noqa: E402


def model(name, **state):
    return {"model_name": name, "model_module": "@jupyter-widgets/controls", "state": state}


def notebook_with_a_widget():
    states = {
        "box": model("VBoxModel", children=["IPY_MODEL_slider", "IPY_MODEL_text",
                                            "IPY_MODEL_menu", "IPY_MODEL_bit", "IPY_MODEL_out"]),
        "slider": model("IntSliderModel", description="rank", value=13),
        "text": model("HTMLModel", value="<p>rank 13 = (1, 1, 1, 0)</p>"),
        "menu": model("DropdownModel", description="format", _options_labels=["fp16", "bf16"],
                      index=1),
        "bit": model("ButtonModel", description="1", style="IPY_MODEL_bitstyle"),
        "bitstyle": model("ButtonStyleModel", button_color="#337ab7"),
        "out": model("OutputModel", outputs=[{"output_type": "display_data", "metadata": {},
                                              "data": {"image/png": "iVBORw0K",
                                                       "text/plain": "<Figure>"}}]),
    }
    cell = nbformat.v4.new_code_cell("explorer", outputs=[nbformat.v4.new_output(
        "display_data", data={VIEW: {"model_id": "box", "version_major": 2,
                                     "version_minor": 0}, "text/plain": "VBox(...)"})])
    return nbformat.v4.new_notebook(cells=[cell], metadata={"widgets": {STATE: {
        "state": states, "version_major": 2, "version_minor": 0}}})


def test_widget_view_becomes_static_html_with_a_note():
    nb, _ = WidgetSnapshotPreprocessor().preprocess(notebook_with_a_widget(), {})
    (output,) = nb.cells[0].outputs
    page = output["data"]["text/html"]
    assert VIEW not in output["data"]
    assert "<b>rank</b> 13" in page
    assert "<p>rank 13 = (1, 1, 1, 0)</p>" in page
    assert "<b>format</b> bf16" in page
    assert "background:#337ab7" in page
    assert '<img src="data:image/png;base64,iVBORw0K">' in page
    assert "Open the notebook in JupyterLab" in page
    assert "widgets" not in nb.metadata          # no widget manager is loaded for it


def test_widget_without_saved_state_says_so():
    nb = notebook_with_a_widget()
    nb.metadata.pop("widgets")
    nb, _ = WidgetSnapshotPreprocessor().preprocess(nb, {})
    assert "state was not saved" in nb.cells[0].outputs[0]["data"]["text/html"]
