"""A student's cell run again in another process (an MPI rank) or for a reference: the course's
fixed preamble (the code-question contract of :mod:`gemmlab.grading.worker`), then the cell with
``check`` a no-op, then its function looked up by name. What travels is the cell's text and the
name (:func:`gemmlab.grading.answers.code_of`), so a lab's cell must be self-contained given the
preamble, as the exercise skeletons say.
"""
import linecache

from ..grading.worker import PREAMBLE


def load_function(source, name, filename="<student cell>"):
    """Run the preamble and ``source`` (with ``check`` a no-op) and return the function ``name``.
    The source is registered in ``linecache`` under ``filename``, as IPython does for a cell, so
    messages and tracebacks can quote its lines."""
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"__name__": "__gemmlab_cell__", "check": lambda *args, **kwargs: None}
    exec(compile(PREAMBLE, "<preamble>", "exec"), namespace)
    exec(compile(source, filename, "exec"), namespace)
    fn = namespace.get(name)
    if not callable(fn):
        raise ValueError(f"the cell's source does not define a function named {name!r}")
    return fn
