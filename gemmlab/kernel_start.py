"""The course kernel's start-up: an IPython extension that the kernel of ``gemmlab lab`` loads
(``--ext=gemmlab.kernel_start`` in the course's kernel spec, ``jupyter/kernels/python3``) and that
``from gemmlab.grading import check`` installs too, in a kernel started otherwise.

It does two things, and stays light (the standard library only) since every kernel pays for it:

* it notes when each cell run started (:func:`ran_at`), so that ``check()`` can tell a notebook
  saved after the cell ran from one saved before it (:mod:`gemmlab.grading.judged_cell`);
* a ``NameError`` that a restart causes (``check``, ``hint``, ``reveal`` or ``gl`` not imported
  yet, or the answer a check cell names not defined yet) becomes one line naming the cell to run
  first, found in the saved notebook, instead of a bare traceback.

The saved notebook is the running kernel's: JupyterLab tells the kernel its path
(``__session__`` in the namespace, ``JPY_SESSION_NAME`` in the environment).
"""
import json
import os
import re
import time
from pathlib import Path

HELPERS = ("check", "hint", "reveal", "gl")     # what the exercises' import cell brings
_RAN_AT = {}                                    # execution count -> time.time() at its start


def ran_at(count):
    """When the cell run ``In [count]`` started (seconds since the epoch), or None if unknown."""
    return _RAN_AT.get(count)


class _RunClock:
    """IPython's pre_run_cell and post_run_cell hooks: a run's start, filed under the execution
    count that post_run_cell reports (a silent run has none)."""

    def __init__(self):
        self.started = None

    def pre_run_cell(self, *_info):
        self.started = time.time()

    def post_run_cell(self, result):
        if result.execution_count is not None and self.started is not None:
            _RAN_AT[result.execution_count] = self.started


def notebook_path(shell):
    """The saved notebook of the running kernel, or None when it is not known."""
    name = shell.user_ns.get("__session__") or os.environ.get("JPY_SESSION_NAME")
    if not isinstance(name, str) or not name.endswith(".ipynb"):
        return None
    for path in (Path(name), Path.cwd() / Path(name).name):      # absolute, or the server's path
        if path.is_file():
            return path
    return None


def saved_cells(path):
    """The sources of the saved notebook's code cells ([] if it cannot be read)."""
    try:
        nb = json.loads(Path(path).read_text(encoding="utf-8"))
        return ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
                for c in nb["cells"] if c.get("cell_type") == "code"]
    except (OSError, ValueError, KeyError, TypeError):
        return []


def defines(source, name):
    """Whether the cell ``source`` defines ``name`` at its top level (def, class, assignment)."""
    n = re.escape(name)
    return re.search(rf"^(?:(?:async\s+)?def\s+{n}\s*\(|class\s+{n}\b|{n}\s*(?::[^=\n]*)?=(?!=))",
                     source, re.M) is not None


def imports(source, name):
    """Whether the cell ``source`` imports ``name`` (``import x as name``, ``from m import
    ..., name``)."""
    n = re.escape(name)
    return re.search(rf"^\s*(?:from\s+[\w.]+\s+)?import\s+[^\n#]*\b{n}\b", source, re.M) is not None


def first_line(source):
    """The first non-blank line of ``source`` that is not a comment, shortened for a message."""
    lines = [line.strip() for line in source.splitlines()]
    return next((line for line in lines if line and not line.startswith("#")), "")[:70]


def _cell_to_run(shell, name):
    """The saved cell that makes ``name`` (an import for a helper, else a definition), or None."""
    path = notebook_path(shell)
    wanted = imports if name in HELPERS else defines
    return next((c for c in (saved_cells(path) if path else []) if wanted(c, name)), None)


def _name_error(shell, etype, value, tb, tb_offset=None):
    """IPython's handler for NameError (it must show the error itself): for a helper of the
    course, or a name a check() call of the cell passes, which cell to run first; anywhere else
    the usual traceback."""
    name = getattr(value, "name", None)
    history = shell.history_manager.input_hist_raw
    cell = history[-1] if history else ""
    in_check = name and re.search(rf"\bcheck\s*\([^)]*\b{re.escape(name)}\b", cell)
    if name not in HELPERS and not in_check:
        shell.showtraceback((etype, value, tb), tb_offset=tb_offset, running_compiled_code=True)
        return None
    where = _cell_to_run(shell, name)
    first = f": the one that starts `{first_line(where)}`" if where else ""
    kind = "imports" if name in HELPERS else "defines"
    message = [f"NameError: {name} is not defined. Run the cell that {kind} it first{first}, "
               f"then this one again. (After a kernel restart every name is gone: run the cells "
               f"above this one, e.g. Run > Run All Above Selected Cell.)"]
    shell._showtraceback(etype, value, message)     # what ipykernel sends as the cell's error
    return message


def load_ipython_extension(shell):
    """Install both (once per kernel; a NameError handler already set by someone else stays)."""
    if getattr(shell, "_gemmlab_started", False):
        return
    shell._gemmlab_started = True
    clock = _RunClock()
    shell.events.register("pre_run_cell", clock.pre_run_cell)
    shell.events.register("post_run_cell", clock.post_run_cell)
    if not shell.custom_exceptions:
        shell.set_custom_exc((NameError,), _name_error)


def install():
    """The extension, in IPython (a kernel that did not load it at start); nothing elsewhere."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None and hasattr(shell, "events"):
        load_ipython_extension(shell)
