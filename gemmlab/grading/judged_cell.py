"""What ``check()`` judged, told to the student (issue 38): the cell run whose definition it
judged (``In [7]``, from IPython's history), and whether the saved notebook's cell still reads as
that run did ("you edited this cell since running it: run it again").

That note is never a guess. JupyterLab saves on its own (autosave), so a saved cell that differs
from the run says something only when the file was saved after the run started: the kernel's
start-up (:mod:`gemmlab.kernel_start`) notes when each run started, and a file saved before then
holds an older text, which the run replaced. A run whose start is not known, or an edit not saved
yet, gets no note (the kernel cannot see the page). Outside IPython, or when the notebook is not
known, nothing is said: the verdict is the same either way.
"""

from .. import kernel_start
from ..kernel_start import defines, notebook_path, saved_cells


def _shell():
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    shell = get_ipython()
    return shell if hasattr(shell, "history_manager") else None


def _same(a, b):
    return [line.rstrip() for line in a.strip().splitlines()] == \
        [line.rstrip() for line in b.strip().splitlines()]


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
    run and was saved after it started, that it must be run again; '' outside IPython, for
    another value (a literal), or when no run defines ``name``."""
    shell = _shell()
    if shell is None or shell.user_ns.get(name, object()) is not answer:
        return ""
    found = ran_cell(shell, name)
    if not found:
        return ""
    count, ran = found
    text = f"(judged: {name} as In [{count}] defined it"
    path = notebook_path(shell)
    cells = saved_cells(path) if path and _saved_since(path, count) else []
    if any(defines(c, name) for c in cells) and not any(_same(c, ran) for c in cells):
        return (text + f"; you edited this cell since running it: run it again, then check. "
                       f"The saved {path.name} differs from In [{count}].)")
    return text + ")"


def _saved_since(path, count):
    """Whether the notebook ``path`` was saved after the run ``In [count]`` started."""
    started = kernel_start.ran_at(count)
    try:
        return started is not None and path.stat().st_mtime > started
    except OSError:
        return False


def answer_name(answer, default):
    """The name a check judges: a function's own name, else the question's answer name."""
    name = getattr(getattr(answer, "py_func", answer), "__name__", None)
    return name if callable(answer) and isinstance(name, str) and name.isidentifier() else default


def install():
    """In IPython: the kernel's start-up (:mod:`gemmlab.kernel_start`), when the kernel was not
    started with it: cell run times for the note above, a NameError naming the cell to run."""
    kernel_start.install()
