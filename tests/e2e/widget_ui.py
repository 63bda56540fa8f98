"""Working an ipywidgets view the way a student does: sliders by keyboard on their handle,
drop-downs, buttons and text boxes by mouse and typing; and reading what the view shows."""
import time


def control(view, kind, label):
    """The control of ``kind`` ("slider", "dropdown", "text") whose description contains
    ``label``."""
    return view.locator(f".widget-{kind}").filter(
        has=view.page.locator("label.widget-label", has_text=label))


def move_slider(view, label, steps=1):
    """Press the arrow key ``steps`` times on the slider's handle (left when negative)."""
    handle = control(view, "slider", label).locator(".noUi-handle")
    handle.focus()
    for _ in range(abs(steps)):
        handle.press("ArrowRight" if steps > 0 else "ArrowLeft")


def choose(view, label, option):
    """Pick ``option`` in the drop-down whose description contains ``label``."""
    control(view, "dropdown", label).locator("select").select_option(label=option)


def type_into(view, label, text):
    """Replace the text of the text box described by ``label`` and press Enter."""
    box = control(view, "text", label).locator("input")
    box.fill(text)
    box.press("Enter")


def click_button(view, index):
    """Click the ``index``-th button of the view (0 is the first)."""
    view.locator("button.jupyter-button").nth(index).click()


def figures(view):
    """The data URLs of the view's images: they change when a figure is redrawn."""
    return [img.get_attribute("src") or "" for img in view.locator("img").all()]


def rendered_state(view):
    """What the view displays apart from its sliders and menus: its HTML parts, its figures and
    its buttons' labels."""
    return (view.locator(".widget-html-content").all_inner_texts(), figures(view),
            view.locator("button.jupyter-button").all_inner_texts())


def wait_for_change(view, before, timeout_s=20, state=rendered_state):
    """Wait until ``state(view)`` differs from ``before``; returns the new state."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        now = state(view)
        if now != before:
            return now
        time.sleep(0.2)
    raise AssertionError(f"the widget did not change within {timeout_s} s")


def poke(view):
    """Work the view's first control, whatever it is, as far as it goes (a slider to its other
    end, a drop-down to another option, a button clicked), so that the change cannot be too small
    to show. False when the view has no control."""
    handle = view.locator(".noUi-handle").first
    if handle.count():
        at_min = handle.get_attribute("aria-valuenow") == handle.get_attribute("aria-valuemin")
        handle.focus()
        handle.press("End" if at_min else "Home")
        return True
    select = view.locator(".widget-dropdown select").first
    if select.count() and select.locator("option").count() > 1:
        current = select.evaluate("s => s.options[s.selectedIndex].text")
        other = next(o for o in select.locator("option").all_inner_texts() if o != current)
        select.select_option(label=other)
        return True
    button = view.locator("button.jupyter-button").first
    if button.count():
        button.click()
        return True
    return False
