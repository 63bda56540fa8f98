"""An nbconvert preprocessor that turns each ipywidgets view into a static picture of its state.

A static page has no kernel behind it, so a live widget cannot work there (and the widget manager
would have to be fetched from the network). Instead, each widget output is replaced by HTML
drawn from the widget state that nbclient saved when the notebook ran: the controls with their
values, the HTML parts, and the figures of Output widgets, under a note that says so.
"""
import html

from nbconvert.preprocessors import Preprocessor

VIEW = "application/vnd.jupyter.widget-view+json"
STATE = "application/vnd.jupyter.widget-state+json"
NOTE = ("Interactive widget, shown as it was when the notebook ran. Open the notebook in "
        "JupyterLab (<code>make lab</code>) to use its controls.")

BOXES = {"VBoxModel": "column", "BoxModel": "column", "GridBoxModel": "column",
         "HBoxModel": "row", "TabModel": "column", "AccordionModel": "column"}
CHOICES = {"DropdownModel", "SelectModel", "RadioButtonsModel", "ToggleButtonsModel",
           "SelectionSliderModel"}
VALUES = {"IntSliderModel", "FloatSliderModel", "FloatLogSliderModel", "IntRangeSliderModel",
          "FloatRangeSliderModel", "IntTextModel", "FloatTextModel", "BoundedIntTextModel",
          "BoundedFloatTextModel", "TextModel", "TextareaModel", "IntProgressModel",
          "FloatProgressModel", "CheckboxModel", "ToggleButtonModel"}
HTML_PARTS = {"HTMLModel", "HTMLMathModel", "LabelModel"}


def _model_id(reference):
    return reference.replace("IPY_MODEL_", "")


class WidgetSnapshotPreprocessor(Preprocessor):
    """Replace widget views by their static snapshot, and drop the saved widget state."""

    def preprocess(self, nb, resources):
        states = nb.metadata.get("widgets", {}).get(STATE, {}).get("state", {})
        for cell in nb.cells:
            for n, output in enumerate(cell.get("outputs", [])):
                view = output.get("data", {}).get(VIEW)
                if view is not None:
                    cell.outputs[n] = snapshot_output(view["model_id"], states)
        nb.metadata.pop("widgets", None)        # nothing left for a widget manager to load
        return nb, resources


def snapshot_output(model_id, states):
    """A display_data output showing the widget ``model_id`` as static HTML, with the note."""
    body = render(model_id, states) if model_id in states else (
        "<p><em>(the widget's state was not saved)</em></p>")
    return {"output_type": "display_data", "metadata": {}, "data": {
        "text/html": f'<div class="gemmlab-widget-snapshot"><p class="gemmlab-widget-note">'
                     f'{NOTE}</p>{body}</div>'}}


def render(model_id, states):
    """Static HTML for one widget model and its children."""
    model = states[model_id]
    name, state = model["model_name"], model["state"]
    label = html.escape(str(state.get("description", "") or ""))
    label = f"<b>{label}</b> " if label else ""
    if name in BOXES:
        children = "".join(f"<div>{render(_model_id(c), states)}</div>"
                           for c in state.get("children", []) if _model_id(c) in states)
        return (f'<div style="display:flex;flex-direction:{BOXES[name]};flex-wrap:wrap;'
                f'gap:0.2em 0.6em">{children}</div>')
    if name in HTML_PARTS:
        return f"<div>{label}{state.get('value', '')}</div>"
    if name in CHOICES:
        labels, index = state.get("_options_labels", []), state.get("index")
        chosen = labels[index] if isinstance(index, int) and index < len(labels) else ""
        return f"<div>{label}{html.escape(str(chosen))}</div>"
    if name in VALUES:
        return f"<div>{label}{html.escape(str(state.get('value', '')))}</div>"
    if name == "ButtonModel":
        return _button(state, states)
    if name == "OutputModel":
        return "".join(_output_html(o) for o in state.get("outputs", []))
    return ""                           # layout-only or player models have nothing to show


def _button(state, states):
    style = states.get(_model_id(str(state.get("style", ""))), {}).get("state", {})
    colours = "".join(f"{css}:{style[key]};" for key, css in (("button_color", "background"),
                                                              ("text_color", "color"))
                      if style.get(key))
    return (f'<span style="display:inline-block;min-width:1.6em;text-align:center;'
            f'border:1px solid #bbb;padding:0.1em 0.3em;{colours}">'
            f"{html.escape(str(state.get('description', '')))}</span>")


def _text(value):
    return "".join(value) if isinstance(value, list) else value


def _output_html(output):
    data = {mime: _text(value) for mime, value in output.get("data", {}).items()}
    if "image/png" in data:
        return f'<img src="data:image/png;base64,{data["image/png"]}">'
    if "image/svg+xml" in data:
        return data["image/svg+xml"]
    if "text/html" in data:
        return data["text/html"]
    text = data.get("text/plain", _text(output.get("text", "")))
    return f"<pre>{html.escape(text)}</pre>" if text else ""
