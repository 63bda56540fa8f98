"""A student's loop in the browser, from the student folder `make lab` serves (its root): lesson 00
opens, a link leads to the student's own exercise notebook (its tab named apart from the
lesson's), its cells run, a lab kernel fails, and every instruction the feedback gives is typed as
given: `hint(...)`, `reveal(...)`; the fix passes with no note and nothing red above it;
`gl.progress()`, as lesson 00 says, shows counts; after a kernel restart, a helper's NameError
names the cell to run. The text on the page is asserted, and screenshots go to
``artifacts/student/`` (three also to GEMMLAB_E2E_SCREENS when set, for a review)."""
import os
import re
import shutil
import subprocess
from pathlib import Path

from .lab import ROOT
from .notebook_ui import STDERR, open_notebook, run_all_cells, wait_until_settled

WRONG_KERNEL = """from numba import cuda, float32

TILE = 16


@cuda.jit
def lab_naive(A, B, C):
    M, K = A.shape
    N = B.shape[1]
    row = cuda.blockIdx.y * TILE + cuda.threadIdx.y
    col = cuda.blockIdx.x * TILE + cuda.threadIdx.x
    if row < M and col < N:
        acc = float32(0)
        for k in range(K - 1):
            acc += A[row, k] * B[k, col]
        C[row, col] = acc
"""
LAB = "05.lab_naive"
EXERCISE = "exercises/05_tiled_gemm_exercises.ipynb"


def _type_new_cell(page, code):
    """Type ``code`` into an empty cell at the end of the notebook (the one Shift+Enter left, or
    a new one) and run it; the cell."""
    last = page.locator(".jp-Notebook .jp-Cell").last
    if last.locator(".cm-content").inner_text().strip():
        last.click()
        page.keyboard.press("Escape")
        page.keyboard.press("b")
    page.locator(".jp-Notebook .jp-Cell").last.locator(".cm-content").click()
    page.keyboard.insert_text(code)
    cells = page.locator(".jp-Notebook .jp-CodeCell")
    typed = cells.nth(cells.count() - 1)       # Shift+Enter then adds an empty cell below it
    page.keyboard.press("Shift+Enter")
    return typed


def _run_new_cell(page, code, timeout_s=300):
    """Type and run ``code`` in a new cell; (the text of its output, the cell)."""
    cell = _type_new_cell(page, code)
    wait_until_settled(page, timeout_s)
    return cell.locator(".jp-OutputArea").inner_text(), cell


def _restart_kernel(page):
    """Kernel > Restart Kernel..., confirmed, as a student restarts; then wait until JupyterLab
    has the new kernel idle. (A restart through the server's REST API raced the page under load:
    a cell run before the page saw the restart lost its output.)"""
    page.get_by_role("menuitem", name="Kernel", exact=True).click()
    page.get_by_role("menuitem", name=re.compile(r"^Restart Kernel")).first.click()
    page.get_by_role("button", name="Confirm Kernel Restart").click()     # the dialog's Restart
    page.locator(".jp-Dialog").wait_for(state="detached")
    page.locator('.jp-NotebookPanel .jp-Notebook-ExecutionIndicator[data-status="idle"]').wait_for(
        timeout=120_000)


def _echoed(cell):
    """How many values Jupyter showed as the cell's result (Out[n]), beyond what it printed."""
    return cell.locator(".jp-OutputArea-executeResult").count()


def _shot(page, artifacts, name, review=None):
    (artifacts / "student").mkdir(exist_ok=True)
    path = artifacts / "student" / f"{name}.png"
    page.screenshot(path=path, full_page=False)
    screens = os.environ.get("GEMMLAB_E2E_SCREENS")
    if review and screens:
        Path(screens).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(screens) / f"{review}.png")


def test_a_student_follows_every_instruction_from_the_student_folder(page, lab, artifacts):
    assert (lab.root / EXERCISE).is_file()
    open_notebook(page, lab, "notebooks/00_start_here.ipynb")
    _shot(page, artifacts, "01-lesson-00")

    page.locator('.jp-Notebook a[href*="exercises/00_start_here_exercises.ipynb"]').last.click()
    page.wait_for_function("() => location.pathname.includes('exercises/00_start_here')")
    page.locator(".jp-NotebookPanel:visible .jp-Notebook").wait_for()
    tabs = page.locator("#jp-main-dock-panel .lm-TabBar-tab .lm-TabBar-tabLabel").all_inner_texts()
    assert sorted(tabs) == ["00_start_here.ipynb", "00_start_here_exercises.ipynb"], tabs
    _shot(page, artifacts, "02-followed-link-to-exercise")      # two tabs, two names

    open_notebook(page, lab, EXERCISE)         # alone in a fresh layout (one notebook panel)
    run_all_cells(page, timeout_s=600)          # the student runs the notebook first
    _run_new_cell(page, WRONG_KERNEL)
    failed, cell = _run_new_cell(page, f'check("{LAB}", lab_naive)')
    assert f"[FAIL] {LAB}" in failed
    told = re.search(r"hint\('05\.lab_naive'\)", failed)
    assert told, failed                         # the feedback says what to type next ...
    given, cell = _run_new_cell(page, told[0])  # ... and the student types exactly that
    assert f"Hint 1 of 3 for {LAB}" in given and "NameError" not in given
    assert _echoed(cell) == 0, "the hint was shown twice"
    _shot(page, artifacts, "03-fail-then-hint", review="fail-then-hint")

    cell = _type_new_cell(page, f"reveal('{LAB}')")     # as lesson 00 says; it asks first: y
    page.locator(".jp-Stdin-input").fill("y")
    page.keyboard.press("Enter")
    wait_until_settled(page, 120)
    shown = cell.locator(".jp-OutputArea").inner_text()
    assert f"Worked answer of {LAB}" in shown and "NameError" not in shown
    assert _echoed(cell) == 0, "the worked answer was shown twice"
    _shot(page, artifacts, "04-reveal")

    _run_new_cell(page, WRONG_KERNEL.replace("range(K - 1)", "range(K)"))
    passed, cell = _run_new_cell(page, f'check("{LAB}", lab_naive)')
    assert f"[PASS] {LAB}" in passed
    assert "edited" not in passed, passed       # the saved file is older than the run: no note
    assert cell.locator(STDERR).count() == 0, "red text above the PASS"
    _shot(page, artifacts, "05-pass-no-note", review="pass-with-no-note")

    page.keyboard.press("Control+s")            # progress reads the saved notebooks
    shown, cell = _run_new_cell(page, "gl.progress()", timeout_s=900)
    assert "NameError" not in shown and "never awaited" not in shown
    assert re.search(r"\[\d+/\d+\] 05_tiled_gemm_exercises\.ipynb: [1-9]\d* passed", shown), shown
    row = next(line for line in shown.splitlines() if line.startswith("05 "))
    assert int(row.split()[1]) >= 1, row        # lesson 05's row: passed, not all zero
    assert _echoed(cell) == 0, "the rows were shown again as a list"
    assert cell.locator("img").count() >= 1     # the bars
    cell.evaluate("e => e.scrollIntoView()")    # the typed line, then the counts, in view
    _shot(page, artifacts, "06-progress", review="progress-with-counts")

    _restart_kernel(page)
    after, cell = _run_new_cell(page, f'hint("{LAB}")')
    assert cell.locator(".jp-InputPrompt").inner_text().strip() == "[1]:"   # the new kernel's
    assert "NameError: hint is not defined. Run the cell that imports it first" in after, after
    assert "import gemmlab as gl" in after and "Traceback" not in after
    _shot(page, artifacts, "07-after-restart")

    status = subprocess.run(["git", "status", "--porcelain", "notebooks", "exercises"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout
    assert status == "", status
