"""How a student's function travels between processes: as the text of the notebook cell that
defines it and its name, run again on the other side after a fixed preamble.

:func:`code_of` gives (cell source, name) of a live function; :func:`load_function` runs
:data:`PREAMBLE` and the cell (with ``check`` a no-op) and returns the function. This is what the
grader's code worker, the MPI ranks of ``run_mpi``, the GPU labs' check on the simulator and the
labs' reference kernels (read from the solutions notebooks) all do, so a cell must be
self-contained given the preamble, as the exercise skeletons say.
"""
import linecache

from . import allow

PREAMBLE = """import math
import numpy as np
import gemmlab as gl
from numba import float32, int32
cuda = gl.device.cuda()
"""


def code_of(fn):
    """(source of the notebook cell that defines ``fn``, the name to look it up by).

    IPython keeps each cell's text in ``linecache`` under the cell's file name, which a function
    defined in it carries in ``__code__.co_filename``; a numba kernel carries its Python function
    in ``py_func``. The whole cell is returned: constants and helpers the function needs live there.
    Raises TypeError for an object that is not a function, ValueError if its cell is unknown.
    """
    target = getattr(fn, "py_func", fn)
    code = getattr(target, "__code__", None)
    if code is None:
        raise TypeError(f"expected a function defined in a notebook cell, got "
                        f"{type(fn).__name__} {str(fn)[:60]}")
    if target.__name__ == "<lambda>":
        raise ValueError("a lambda has no name to look it up by in another process: define the "
                         "function with def")
    lines = linecache.getlines(code.co_filename)
    if not lines:
        raise ValueError(f"the source of {target.__name__}() is not known: was it defined in a "
                         f"notebook cell of this kernel? ({code.co_filename})")
    return "".join(lines), target.__name__


def run_cell(source, filename="<student cell>", namespace=None):
    """(namespace, the exception the cell raised or None) after running the preamble and
    ``source`` with ``check`` a no-op. The source is registered in ``linecache`` under
    ``filename``, as IPython does for a cell, so messages and tracebacks can quote its lines. What
    the cell defined before it raised stays in the namespace. A ``namespace`` given (a question's,
    :func:`gemmlab.judging.allow.namespace`) replaces the preamble's."""
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    if namespace is None:
        namespace = {"__name__": "__gemmlab_cell__", "check": lambda *args, **kwargs: None}
        exec(compile(PREAMBLE, "<preamble>", "exec"), namespace)
    try:
        exec(compile(source, filename, "exec"), namespace)
    except Exception as exc:  # the student's cell: the caller decides what it means
        return namespace, exc
    return namespace, None


def load_function(source, name, filename="<student cell>", allows=None):
    """Run the preamble and ``source`` (:func:`run_cell`) and return the function ``name``; what
    the cell raised is raised here.

    With ``allows`` (a question's :class:`~gemmlab.judging.allow.Allows`), the cell runs instead
    in the namespace the question builds, after its source passes the allow-list (a broken rule
    raises :class:`~gemmlab.judging.allow.AllowError` naming it). This is where a lab's answer
    runs, in whatever process calls it; a Python answer runs in :mod:`.runtime`'s process."""
    found = defined(source, name, filename, allows)
    if not callable(found.get(name)):
        raise ValueError(f"the cell's source does not define a function named {name!r}")
    return found[name]


def defined(source, name, filename="<student cell>", allows=None):
    """``{name: what the cell binds to it}``, or ``{}`` if the
    cell binds nothing to ``name``: :func:`load_function` for callers that tell an unanswered
    question from a wrong one. Raises what the cell raised, or the broken rule."""
    if allows is None:
        namespace, error = run_cell(source, filename)
    else:
        problem = allow.refused(allows, source, name)
        if problem:
            raise allow.AllowError(problem)
        namespace, error = run_cell(source, filename, allow.namespace(allows))
    if error is not None:
        raise error
    if name not in namespace:
        return {}
    return {name: namespace[name]}


def from_other_cells(fn, source):
    """Names the cell ``source`` uses but does not define (nor the preamble, nor Python), which
    ``fn``'s notebook has from another cell: what the grader, running the cell alone, will miss."""
    import ast
    import builtins
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return []
    used, defined = set(), set(dir(builtins)) | {"math", "np", "gl", "float32", "int32", "cuda",
                                                 "check"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (used if isinstance(node.ctx, ast.Load) else defined).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
            defined.update(a.arg for a in node.args.args + node.args.posonlyargs
                           + node.args.kwonlyargs) if not isinstance(node, ast.ClassDef) else None
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            defined.update((a.asname or a.name.split(".")[0]) for a in node.names)
        elif isinstance(node, ast.arg):
            defined.add(node.arg)
    namespace = getattr(getattr(fn, "py_func", fn), "__globals__", {})
    return sorted(name for name in used - defined if name in namespace)
