"""check() tells the truth about what it judged (issues 38, 53): the cell run it judged
(In [n]), and a saved cell that no longer reads as that run only when it was saved after the run
(JupyterLab autosaves: a file saved before the run is older than what ran). Each case executes a
notebook in a real kernel that knows its saved file as JupyterLab tells it (JPY_SESSION_NAME)."""
from kernel_cells import run_cells as _run

from gemmlab.grading import judged_cell

IMPORT = "from gemmlab.grading import check"
DEFINE = "matrix_mib = 1024 * 1024 * 4 / 2**20"
CHECK = 'r = check("00.matrix_mib", matrix_mib)'
FUNCTION = "def row_major_index(r, c, rows, cols):\n    return r * cols + c"
CHECK_FUNCTION = 'check("02.row_major_index", row_major_index)'


# a cell that saves the notebook now, as JupyterLab's autosave would: the text of later.ipynb
SAVE = "import shutil, time\ntime.sleep(0.1)\nshutil.copyfile('later.ipynb', '00_probe.ipynb')"


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


def test_outside_ipython_nothing_is_said():
    assert judged_cell.describe("matrix_mib", 4.0) == ""
    assert judged_cell.defines("x: int = 3", "x") and not judged_cell.defines("x == 3", "x")
    assert judged_cell.defines("async def f(a):\n    pass", "f")
