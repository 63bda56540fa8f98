"""check() tells the truth about what it judged (issue 38): the cell run it judged (In [n]),
a saved cell that no longer reads as that run, and, after a restart, which cell to run first
instead of a bare NameError. Each case executes a notebook in a real kernel that knows its
saved file as JupyterLab tells it (JPY_SESSION_NAME)."""
import nbformat
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

from gemmlab import notebook_run
from gemmlab.grading import judged_cell

IMPORT = "from gemmlab.grading import check"
DEFINE = "matrix_mib = 1024 * 1024 * 4 / 2**20"
CHECK = 'r = check("00.matrix_mib", matrix_mib)'
FUNCTION = "def row_major_index(r, c, rows, cols):\n    return r * cols + c"
CHECK_FUNCTION = 'check("02.row_major_index", row_major_index)'


def _run(tmp_path, monkeypatch, ran, saved=None, skip=()):
    """Execute the cells ``ran`` (those at the indices ``skip`` not run, as after a restart), the
    notebook saved on disk holding ``saved`` (default: what ran); each code cell's text out."""
    path = tmp_path / "00_probe.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell(s) for s in saved or ran]), path)
    monkeypatch.setenv("JPY_SESSION_NAME", str(path))
    nb = new_notebook(cells=[new_code_cell(s, metadata={"tags": ["skip"] if i in skip else []})
                             for i, s in enumerate(ran)])
    NotebookClient(nb, timeout=120, allow_errors=True, skip_cells_with_tag="skip",
                   kernel_manager_class=notebook_run.LocalAsyncKernelManager,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
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
    out = _run(tmp_path, monkeypatch, [IMPORT, DEFINE, CHECK],
               saved=[IMPORT, "matrix_mib = 1024 * 1024 / 2**20", CHECK])
    assert "[PASS] 00.matrix_mib" in out[2]        # the verdict is on what ran ...
    assert "you edited this cell since running it: run it again" in out[2]   # ... and says so
    assert "The saved 00_probe.ipynb differs from In [2]" in out[2]


def test_after_a_restart_a_check_cell_says_which_cell_to_run_first(tmp_path, monkeypatch):
    out = _run(tmp_path, monkeypatch, [IMPORT, DEFINE, CHECK, "undefined_elsewhere"], skip={1})
    assert "NameError: matrix_mib is not defined. Run the cell that defines it first: the one " \
           f"that starts `{DEFINE}`" in out[2]
    assert "Traceback" not in out[2]
    assert "NameError" in out[3] and "Run the cell" not in out[3]   # no check: the usual error


def test_outside_ipython_nothing_is_said():
    assert judged_cell.describe("matrix_mib", 4.0) == ""
    assert judged_cell.defines("x: int = 3", "x") and not judged_cell.defines("x == 3", "x")
    assert judged_cell.defines("async def f(a):\n    pass", "f")
