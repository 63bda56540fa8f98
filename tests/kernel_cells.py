"""Running a notebook's cells in a real kernel that knows its saved file as JupyterLab tells it
(JPY_SESSION_NAME): what the tests of check()'s notes (test_grading_judged_cell.py) and of the
kernel's start-up (test_kernel_start.py) share."""
import nbformat
from jupyter_client.kernelspec import KernelSpecManager
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

from gemmlab import course, notebook_run


def course_kernel():
    """The kernel of `gemmlab lab`: the course's kernel spec (jupyter/kernels/python3)."""
    specs = KernelSpecManager(kernel_dirs=[str(course.jupyter_settings() / "kernels")],
                              ensure_native_kernel=False)
    return {"km": notebook_run.LocalAsyncKernelManager(kernel_name="python3",
                                                       kernel_spec_manager=specs)}


def run_cells(tmp_path, monkeypatch, ran, saved=None, skip=(), later=None, kernel=None):
    """Execute the cells ``ran`` (those at the indices ``skip`` not run, as after a restart), the
    notebook saved on disk (00_probe.ipynb) holding ``saved`` (default: what ran) before they
    run, and ``later`` in later.ipynb (for a cell that copies it over the saved one); each code
    cell's text out."""
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
