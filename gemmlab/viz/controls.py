"""How a figure of the course redraws under its controls (sliders, menus): one helper, so that
every widget draws once when shown and again on each change, in the same box layout."""


def redrawing(draw, controls):
    """``draw(**values)`` under ``controls`` ({keyword: ipywidget}), drawn now and again whenever
    a control's value changes. Returns a VBox: the controls in a row, then the figure."""
    import ipywidgets as widgets
    import matplotlib.pyplot as plt

    out = widgets.Output()

    def redraw(_=None):
        with out:
            out.clear_output(wait=True)
            draw(**{name: control.value for name, control in controls.items()})
            plt.show()

    for control in controls.values():
        control.observe(redraw, names="value")
    redraw()
    return widgets.VBox([widgets.HBox(list(controls.values())), out])
