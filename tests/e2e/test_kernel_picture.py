"""The picture of a student's own kernel in JupyterLab: a puzzle check with a race draws it by
itself, the two threads and the slot in red; `show=True` draws it for a passing kernel, without
red; a passing check without `show` draws nothing. Screenshots go to
``artifacts/kernel-picture/``."""
import nbformat
import pytest

from .notebook_ui import code_cell, error_outputs, open_notebook, run_all_cells

PICTURE = ".gemmlab-kernel-picture svg"
PREAMBLE = ("import gemmlab as gl\nfrom gemmlab.grading import check\nfrom numba import float32\n"
            "cuda = gl.device.cuda()\n")
SHARED = '''
@cuda.jit
def shift(a, out):
    s = cuda.shared.array(32, float32)
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * 32 + t
    s[t] = a[i] if i < a.shape[0] else 0
    {barrier}
    if i < a.shape[0]:
        out[i] = s[t] + s[(t + 1) % 32]
'''
CASES = {
    "a race draws itself": SHARED.format(barrier="pass") + 'check("03.puzzle_shared", shift)',
    "show on a pass": SHARED.format(barrier="cuda.syncthreads()")
    + 'check("03.puzzle_shared", shift, show=True)',
    "a pass without show": SHARED.format(barrier="cuda.syncthreads()")
    + 'check("03.puzzle_shared", shift)',
}


def marker(name):
    return f"# picture case: {name}"


@pytest.fixture(scope="module")
def picture_page(open_page, lab):
    path = lab.root / "kernel_picture.ipynb"
    cells = [nbformat.v4.new_code_cell(PREAMBLE)]
    cells += [nbformat.v4.new_code_cell(f"{marker(name)}\n{code}") for name, code in CASES.items()]
    nbformat.write(nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": {
        "name": "python3", "display_name": "Python 3", "language": "python"}}), path)
    with open_page("kernel-picture") as page:
        open_notebook(page, lab, path)
        run_all_cells(page, timeout_s=300)
        errors = error_outputs(page)
        assert not errors, "the picture notebook shows errors:\n\n" + "\n\n".join(errors)
        yield page


def shot(page, artifacts, name):
    folder = artifacts / "kernel-picture"
    folder.mkdir(exist_ok=True)
    cell = code_cell(page, marker(name))
    cell.screenshot(path=folder / f"{name.replace(' ', '-')}.png")
    return cell


def test_a_race_draws_the_picture_by_itself_with_the_pair_in_red(picture_page, artifacts):
    cell = shot(picture_page, artifacts, "a race draws itself")
    assert "FAIL" in cell.inner_text() and "a missing barrier" in cell.inner_text()
    picture = cell.locator(PICTURE)
    assert picture.count() == 1
    assert picture.locator(".kp-thread.kp-fault").count() == 2       # the reader and the writer
    assert picture.locator(".kp-fault.kp-element").count() == 2      # the slot, in both panels
    assert picture.locator(".kp-write").count() > 0 and picture.locator(".kp-read").count() > 0
    assert picture.bounding_box()["width"] > 200                     # drawn, not just present


def test_show_draws_a_passing_kernel_and_a_plain_check_does_not(picture_page, artifacts):
    shown = shot(picture_page, artifacts, "show on a pass")
    assert "PASS" in shown.inner_text()
    picture = shown.locator(PICTURE)
    assert picture.count() == 1 and picture.locator(".kp-fault").count() == 0
    assert picture.locator(".kp-barrier").count() >= 1               # the syncthreads, drawn
    plain = shot(picture_page, artifacts, "a pass without show")
    assert "PASS" in plain.inner_text() and plain.locator(PICTURE).count() == 0
