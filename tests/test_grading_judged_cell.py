"""check() tells the truth about what it judged (issues 38, 53): the cell run it judged
(In [n]), a saved cell that no longer reads as that run only when it was saved after the run
(JupyterLab autosaves: a file saved before the run is older than what ran), and, after a restart,
which cell to run first instead of a bare NameError, for an answer and for the helpers of the
import cell (the course's kernel spec loads gemmlab.kernel_start). Each case executes a notebook
in a real kernel that knows its saved file as JupyterLab tells it (JPY_SESSION_NAME)."""
from pathlib import Path

import nbformat
from jupyter_client.kernelspec import KernelSpecManager
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

from gemmlab import course, notebook_run
from gemmlab.grading import judged_cell

IMPORT = "from gemmlab.grading import check"
DEFINE = "matrix_mib = 1024 * 1024 * 4 / 2**20"
CHECK = 'r = check("00.matrix_mib", matrix_mib)'
FUNCTION = "def row_major_index(r, c, rows, cols):\n    return r * cols + c"
CHECK_FUNCTION = 'check("02.row_major_index", row_major_index)'


# a cell that saves the notebook now, as JupyterLab's autosave would: the text of later.ipynb
SAVE = "import shutil, time\ntime.sleep(0.1)\nshutil.copyfile('later.ipynb', '00_probe.ipynb')"


def _course_kernel():
    """The kernel of `gemmlab lab`: the course's kernel spec (jupyter/kernels/python3)."""
    specs = KernelSpecManager(kernel_dirs=[str(course.jupyter_settings() / "kernels")],
                              ensure_native_kernel=False)
    return {"km": notebook_run.LocalAsyncKernelManager(kernel_name="python3",
                                                       kernel_spec_manager=specs)}


def _run(tmp_path, monkeypatch, ran, saved=None, skip=(), later=None, kernel=None):
    """Execute the cells ``ran`` (those at the indices ``skip`` not run, as after a restart), the
    notebook saved on disk holding ``saved`` (default: what ran) before they run, and ``later``
    in later.ipynb (for :data:`SAVE`); each code cell's text out."""
    path = tmp_path / "00_probe.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell(s) for s in saved or ran]), path)
    if later:
        nbformat.write(new_notebook(cells=[new_code_cell(s) for s in later]),
                       tmp_path / "later.ipynb")
    monkeypatch.setenv("JPY_SESSION_NAME", str(path))
    nb = new_notebook(cells=[new_code_cell(s, metadata={"tags": ["skip"] if i in skip else []})
                             for i, s in enumerate(ran)])
    NotebookClient(nb, timeout=120, allow_errors=True, skip_cells_with_tag="skip",
                   kernel_manager_class=notebook_run.LocalAsyncKernelManager,
                   resources={"metadata": {"path": str(tmp_path)}}, **(kernel or {})).execute()
    return ["".join(o.get("text", "") + "\n".join(o.get("traceback", [])) for o in c.outputs)
            for c in nb.cells]


def test_check_names_the_run_it_judged_for_a_value_and_a_function(tmp_path, monkeypatch):
    out = _run(tmp_path, monkeypatch, [IMPORT, DEFINE, CHECK, FUNCTION, CHECK_FUNCTION,
                                       'check("00.matrix_mib", 4.0)'])
    assert "[PASS] 00.matrix_mib" in out[2]
    assert "(judged: matrix_mib as In [2] defined it)" in out[2]
    assert "(judged: row_major_index as In [4] defined it)" in out[4]
    assert "judged:" not in out[5]                 # a literal: no cell defined what was judged
    assert "edited" not in "".join(out)


def test_a_cell_edited_and_saved_since_it_ran_is_named(tmp_path, monkeypatch):
    out = _run(tmp_path, monkeypatch, [IMPORT, DEFINE, SAVE, CHECK],
               later=[IMPORT, "matrix_mib = 1024 * 1024 / 2**20", SAVE, CHECK])
    assert "[PASS] 00.matrix_mib" in out[3]        # the verdict is on what ran ...
    assert "you edited this cell since running it: run it again" in out[3]   # ... and says so
    assert "The saved 00_probe.ipynb differs from In [2]" in out[3]


def test_a_notebook_saved_before_the_run_gets_no_note(tmp_path, monkeypatch):
    """The student edited the cell and ran it; the last autosave came before the run: the
    saved text is older than what ran, and the run is what is judged. Saved again after the
    run with the same text: no note either."""
    out = _run(tmp_path, monkeypatch, [IMPORT, DEFINE, CHECK, SAVE, CHECK],
               saved=[IMPORT, "matrix_mib = 1024 * 1024 / 2**20", CHECK],
               later=[IMPORT, DEFINE, CHECK, SAVE, CHECK])
    assert "[PASS] 00.matrix_mib" in out[2] and "[PASS] 00.matrix_mib" in out[4]
    assert "(judged: matrix_mib as In [2] defined it)" in out[2]
    assert "edited" not in out[2] + out[4]


def test_after_a_restart_a_check_cell_says_which_cell_to_run_first(tmp_path, monkeypatch):
    out = _run(tmp_path, monkeypatch, [IMPORT, DEFINE, CHECK, "undefined_elsewhere"], skip={1})
    assert "NameError: matrix_mib is not defined. Run the cell that defines it first: the one " \
           f"that starts `{DEFINE}`" in out[2]
    assert "Traceback" not in out[2]
    assert "NameError" in out[3] and "Run the cell" not in out[3]   # no check: the usual error


def test_after_a_restart_the_helpers_name_the_import_cell(tmp_path, monkeypatch):
    """In the course's kernel, a fresh kernel's hint(...), reveal(...) and check(...) (the import
    cell not run yet) name the import cell; another NameError stays the usual one."""
    helpers = "from gemmlab.grading import check, hint, reveal"
    out = _run(tmp_path, monkeypatch, ["import gemmlab as gl\n" + helpers, DEFINE,
                                       'hint("05.lab_naive")', 'reveal("05.lab_naive")', CHECK,
                                       "gl.progress()", "undefined_elsewhere"],
               skip={0}, kernel=_course_kernel())
    for cell, name in ((out[2], "hint"), (out[3], "reveal"), (out[4], "check"), (out[5], "gl")):
        assert f"NameError: {name} is not defined. Run the cell that imports it first: the one " \
               "that starts `import gemmlab as gl`" in cell, cell
        assert "Traceback" not in cell
    assert "NameError" in out[6] and "Run the cell" not in out[6]


def test_the_course_kernel_spec_loads_the_start_up():
    spec = KernelSpecManager(kernel_dirs=[str(course.jupyter_settings() / "kernels")],
                             ensure_native_kernel=False).get_kernel_spec("python3")
    assert "--ext=gemmlab.kernel_start" in spec.argv and spec.argv[0] == "python"
    assert Path(spec.resource_dir).parent.parent == course.root() / "jupyter"


def test_outside_ipython_nothing_is_said():
    assert judged_cell.describe("matrix_mib", 4.0) == ""
    assert judged_cell.defines("x: int = 3", "x") and not judged_cell.defines("x == 3", "x")
    assert judged_cell.defines("async def f(a):\n    pass", "f")
