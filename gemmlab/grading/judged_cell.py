"""What ``check()`` judged, told to the student (issue 38): the cell run whose definition it
judged (``In [7]``, from IPython's history), and whether the saved notebook's cell still reads as
that run did ("you edited this cell since running it: run it again"). And, after a kernel
restart, a check cell whose answer is not defined says which cell to run first instead of a bare
``NameError`` (:func:`install`, an IPython custom exception handler).

The saved notebook is the running kernel's: JupyterLab tells the kernel its path
(``__session__`` in the namespace, ``JPY_SESSION_NAME`` in the environment). Outside IPython, or
when the notebook is not known, nothing is said: the verdict is the same either way.
"""
import json
import os
import re
from pathlib import Path


def _shell():
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    shell = get_ipython()
    return shell if hasattr(shell, "history_manager") else None


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


def _same(a, b):
    return [line.rstrip() for line in a.strip().splitlines()] == \
        [line.rstrip() for line in b.strip().splitlines()]


def _first_line(source):
    return next((line.strip() for line in source.splitlines() if line.strip()), "")[:70]


def ran_cell(shell, name):
    """(execution count, source) of the latest cell run that defines ``name``, or None."""
    history = shell.history_manager.input_hist_raw
    for count in range(len(history) - 1, 0, -1):
        if defines(history[count], name):
            return count, history[count]
    return None


def describe(name, answer):
    """The line ``check()`` prints under its verdict on ``answer``, if it is what the notebook's
    ``name`` holds: which run defined it and, when the saved notebook's cell differs from that
    run, that it must be run again; '' outside IPython, for another value (a literal), or when no
    run defines ``name``."""
    shell = _shell()
    if shell is None or shell.user_ns.get(name, object()) is not answer:
        return ""
    found = ran_cell(shell, name)
    if not found:
        return ""
    count, ran = found
    text = f"(judged: {name} as In [{count}] defined it"
    path = notebook_path(shell)
    cells = saved_cells(path) if path else []
    if any(defines(c, name) for c in cells) and not any(_same(c, ran) for c in cells):
        return (text + f"; you edited this cell since running it: run it again, then check. "
                       f"The saved {path.name} differs from In [{count}].)")
    return text + ")"


def answer_name(answer, default):
    """The name a check judges: a function's own name, else the question's answer name."""
    name = getattr(getattr(answer, "py_func", answer), "__name__", None)
    return name if callable(answer) and isinstance(name, str) and name.isidentifier() else default


# --- after a restart ---------------------------------------------------------------------------

def _name_error(shell, etype, value, tb, tb_offset=None):
    """IPython's handler for NameError (it must show the error itself): in a cell that calls
    check() with the missing name, which cell to run first; anywhere else, the usual traceback."""
    name = getattr(value, "name", None)
    history = shell.history_manager.input_hist_raw
    cell = history[-1] if history else ""
    if not name or not re.search(rf"\bcheck\s*\([^)]*\b{re.escape(name)}\b", cell):
        shell.showtraceback((etype, value, tb), tb_offset=tb_offset, running_compiled_code=True)
        return None
    path = notebook_path(shell)
    where = next((c for c in (saved_cells(path) if path else []) if defines(c, name)), None)
    first = f": the one that starts `{_first_line(where)}`" if where else ""
    message = [f"NameError: {name} is not defined. Run the cell that defines it first{first}, "
               f"then this one again. (After a kernel restart every name is gone: run the cells "
               f"above this one, e.g. Run > Run All Above Selected Cell.)"]
    shell._showtraceback(etype, value, message)     # what ipykernel sends as the cell's error
    return message


def install():
    """In IPython, the NameError handler above, unless another custom handler is in place."""
    shell = _shell()
    if shell is not None and not shell.custom_exceptions:
        shell.set_custom_exc((NameError,), _name_error)
