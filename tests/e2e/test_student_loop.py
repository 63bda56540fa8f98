"""A student's loop in the browser, from the student folder `make lab` makes: lesson 00 opens
from it, a link leads to the student's own exercise notebook, an answer fails then passes, a lab
kernel fails, a hint comes, the fix passes, and gl.progress() shows the lessons. Screenshots go
to ``artifacts/student/``; the repository's notebooks are left as they were."""
import subprocess

from .lab import ROOT, student_folder
from .notebook_ui import open_notebook, wait_until_settled

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


def _run_new_cell(page, code, timeout_s=300):
    """Add a cell at the end of the notebook, type ``code`` into it and run it; its output."""
    page.locator(".jp-Notebook .jp-Cell").last.click()
    page.keyboard.press("Escape")
    page.keyboard.press("b")
    page.locator(".jp-Notebook .jp-Cell").last.locator(".cm-content").click()
    page.keyboard.insert_text(code)
    cells = page.locator(".jp-Notebook .jp-CodeCell")
    typed = cells.nth(cells.count() - 1)       # Shift+Enter then adds an empty cell below it
    page.keyboard.press("Shift+Enter")
    wait_until_settled(page, timeout_s)
    return _output(typed)


def _output(cell):
    return cell.locator(".jp-OutputArea").inner_text()


def _shot(page, artifacts, name):
    (artifacts / "student").mkdir(exist_ok=True)
    page.screenshot(path=artifacts / "student" / f"{name}.png", full_page=False)


def test_a_student_works_from_the_student_folder(page, lab, artifacts):
    work = student_folder(artifacts / "lab")
    assert (ROOT / work / "exercises" / "05_tiled_gemm.ipynb").is_file()
    open_notebook(page, lab, f"{work}/notebooks/00_start_here.ipynb")
    _shot(page, artifacts, "01-lesson-00")

    page.locator('.jp-Notebook a[href*="exercises/00_start_here.ipynb"]').last.click()
    page.locator(".lm-TabBar-tab.lm-mod-current", has_text="00_start_here").wait_for()
    page.wait_for_function(f"() => location.pathname.includes('{work}/exercises/00_start_here')")
    page.locator(".jp-NotebookPanel:visible .jp-Notebook").wait_for()
    _shot(page, artifacts, "02-followed-link-to-exercise")
    # the same notebook alone in a fresh layout (the page helpers expect one notebook panel)
    open_notebook(page, lab, f"{work}/exercises/00_start_here.ipynb")

    failed = _run_new_cell(page, 'from gemmlab.grading import check, hint, reveal\n'
                                 'check("00.matrix_mib", 5)')
    assert "[FAIL] 00.matrix_mib" in failed
    passed = _run_new_cell(page, 'check("00.matrix_mib", 4)')
    assert "[PASS] 00.matrix_mib" in passed
    _shot(page, artifacts, "03-answer-failed-then-passed")

    open_notebook(page, lab, f"{work}/exercises/05_tiled_gemm.ipynb")
    _run_new_cell(page, WRONG_KERNEL)
    verdict = _run_new_cell(page, 'import gemmlab as gl\nfrom gemmlab.grading import check, hint\n'
                                  'check("05.lab_naive", lab_naive)')
    assert "[FAIL] 05.lab_naive" in verdict and "hints left" in verdict
    _shot(page, artifacts, "04-lab-failed")
    given = _run_new_cell(page, 'hint("05.lab_naive")')
    assert "Hint 1 of 3 for 05.lab_naive" in given
    _shot(page, artifacts, "05-hint")
    _run_new_cell(page, WRONG_KERNEL.replace("range(K - 1)", "range(K)"))
    fixed = _run_new_cell(page, 'check("05.lab_naive", lab_naive)')
    assert "[PASS] 05.lab_naive" in fixed
    _shot(page, artifacts, "06-lab-fixed-and-passed")

    page.keyboard.press("Control+s")         # progress reads the saved notebooks
    shown = _run_new_cell(page, "rows = gl.progress(lessons=['05'])", timeout_s=600)
    assert "05 " in shown
    assert page.locator(".jp-Notebook .jp-CodeCell .jp-OutputArea img").count() >= 1
    _shot(page, artifacts, "07-progress")

    status = subprocess.run(["git", "status", "--porcelain", "notebooks", "exercises"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout
    assert status == "", status
