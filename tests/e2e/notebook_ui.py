"""What a student does with a notebook in JupyterLab, done through the page: open it, run all
cells from the Run menu, wait for the kernel, and read back what the page shows."""
import re
import time

# A top-level widget view in a cell's output area (Output widgets nest further output areas).
WIDGET_VIEW = (".jp-Cell-outputArea > .jp-OutputArea-child > .jp-OutputArea-output"
               " > .jupyter-widgets")
STDERR = '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'
PLAIN_TEXT = '.jp-OutputArea-output[data-mime-type="text/plain"]'

# An exception's traceback, as IPython prints it (warnings on stderr do not match).
TRACEBACK = re.compile(r"Traceback \(most recent call last\)|^\s*(\w+\.)*\w*(Error|Exception)\b",
                       re.M)
# What JupyterLab shows instead of a widget that did not render.
WIDGET_FAILURES = ("Loading widget...", "Error displaying widget")
# A widget's text fallback, shown when the ipywidgets extension is missing: "VBox(children=...".
WIDGET_REPR = re.compile(r"^\w+\((children|value|description|options|outputs|layout)=")


def open_notebook(page, lab, path, timeout_s=120):
    """Open ``path`` (relative to the lab's root, the student folder, or a file inside it) and
    wait until its kernel is ready."""
    page.goto(lab.url(path))
    page.locator(".jp-NotebookPanel .jp-Notebook").first.wait_for(timeout=timeout_s * 1000)
    page.locator(".jp-NotebookPanel .jp-Toolbar-kernelName", has_text="Python").wait_for(
        timeout=timeout_s * 1000)
    _wait_for_kernel_idle(page, timeout_s)


def run_all_cells(page, timeout_s):
    """Run > Run All Cells, then wait until no cell is queued or running and the kernel is idle."""
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
    wait_until_settled(page, timeout_s)


def _wait_for_kernel_idle(page, timeout_s):
    page.locator('.jp-NotebookPanel .jp-Notebook-ExecutionIndicator[data-status="idle"]').wait_for(
        timeout=timeout_s * 1000)


def _busy(page):
    prompts = page.locator(".jp-CodeCell .jp-InputPrompt").all_inner_texts()
    status = page.locator(".jp-NotebookPanel .jp-Notebook-ExecutionIndicator").get_attribute(
        "data-status")
    return status != "idle" or any("*" in p for p in prompts)


def wait_until_settled(page, timeout_s, quiet_polls=3, poll_s=0.5):
    """Wait until the kernel has been idle, with no cell queued, for ``quiet_polls`` polls in a
    row (a widget's control also keeps the kernel busy while it redraws)."""
    deadline = time.monotonic() + timeout_s
    quiet = 0
    while quiet < quiet_polls:
        if time.monotonic() > deadline:
            raise TimeoutError(f"the notebook was still running after {timeout_s} s")
        quiet = 0 if _busy(page) else quiet + 1
        time.sleep(poll_s)
    # widget views render after their messages arrive: give them a moment to replace the
    # "Loading widget..." placeholder
    page.wait_for_function(
        "() => !document.body.innerText.includes('Loading widget...')", timeout=30_000)


def unexecuted_code_cells(page):
    """1-based numbers of the code cells with source that show no execution count."""
    missing = []
    for n, cell in enumerate(page.locator(".jp-Notebook .jp-CodeCell").all(), start=1):
        prompt = cell.locator(".jp-InputPrompt").inner_text()
        source = cell.locator(".jp-InputArea-editor").inner_text().strip()
        if source and not re.search(r"\[\d+\]", prompt):
            missing.append(n)
    return missing


def error_outputs(page):
    """Every error the page shows: tracebacks, and widgets that failed to render."""
    errors = [text for text in page.locator(f".jp-Notebook {STDERR}").all_inner_texts()
              if TRACEBACK.search(text)]
    errors += [f"a widget shows {text!r}" for text in
               page.locator(".jp-Notebook .jupyter-widgets").all_inner_texts()
               if text.strip() in WIDGET_FAILURES]
    errors += [f"a widget was rendered as text (is the ipywidgets extension missing?): {text[:80]}"
               for text in page.locator(f".jp-Notebook {PLAIN_TEXT}").all_inner_texts()
               if WIDGET_REPR.match(text)]
    return errors


def widget_views(page):
    """The locators of every widget shown as a cell output."""
    return page.locator(f".jp-Notebook {WIDGET_VIEW}").all()


def code_cell(page, marker):
    """The code cell whose source contains ``marker``."""
    return page.locator(".jp-Notebook .jp-CodeCell").filter(
        has=page.locator(".jp-InputArea-editor", has_text=marker))
