"""The course kernel's start-up (gemmlab.kernel_start, which the kernel spec of `gemmlab lab`
loads and `from gemmlab.grading import check` installs): after a restart, a check cell whose
answer is not defined, and a cell calling a helper of the import cell (check, hint, reveal, gl),
say which cell to run first instead of a bare NameError; any other NameError stays the usual one.
Each case runs in a real kernel (tests/kernel_cells.py)."""
from pathlib import Path

from jupyter_client.kernelspec import KernelSpecManager
from kernel_cells import course_kernel as _course_kernel
from kernel_cells import run_cells as _run

from gemmlab import course

IMPORT = "from gemmlab.grading import check"
DEFINE = "matrix_mib = 1024 * 1024 * 4 / 2**20"
CHECK = 'r = check("00.matrix_mib", matrix_mib)'


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
