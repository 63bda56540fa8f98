"""gl.viz.controls.redrawing: drawn once when built, again on every change of any control, with
the controls' current values as keywords; the box holds the controls, then the figure."""
import ipywidgets as widgets

from gemmlab.viz.controls import redrawing


def test_every_change_redraws_with_the_current_values():
    drawn = []
    controls = dict(n=widgets.IntSlider(value=2, min=1, max=9),
                    kind=widgets.Dropdown(options=["a", "b"], value="a"))
    box = redrawing(lambda **values: drawn.append(values), controls)
    assert drawn == [{"n": 2, "kind": "a"}]
    controls["n"].value = 5
    controls["kind"].value = "b"
    assert drawn[1:] == [{"n": 5, "kind": "a"}, {"n": 5, "kind": "b"}]
    row, figure = box.children
    assert list(row.children) == list(controls.values()) and isinstance(figure, widgets.Output)
