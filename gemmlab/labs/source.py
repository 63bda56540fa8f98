"""A student's function as text, and back: how code travels to other processes (MPI ranks).

A function defined in a notebook cell cannot be pickled by reference. What travels is the source
of the cell that defines it (IPython keeps each cell's text in ``linecache`` under the function's
``__code__.co_filename``) plus its name; the receiving process runs the course's fixed preamble,
then the cell with ``check`` replaced by a no-op, and looks the name up. So a lab's cell must be
self-contained given the preamble, as the exercise skeletons say.

(Branch ``grade`` is writing the grader's own version of these two functions; until they merge,
this is the labs' local copy.)
"""
import linecache

PREAMBLE = """\
import math
import numpy as np
import gemmlab as gl
from numba import float32, int32
cuda = gl.device.cuda()
"""


def function_source(fn):
    """(source text of the cell or file that defines ``fn``, its name)."""
    fn = getattr(fn, "py_func", fn)          # a numba dispatcher keeps the Python function here
    code = getattr(fn, "__code__", None)
    if code is None:
        raise TypeError(f"expected a function defined with def, got {type(fn).__name__}")
    lines = linecache.getlines(code.co_filename)
    if not lines:
        raise ValueError(f"cannot find the source of {fn.__name__} (defined in "
                         f"{code.co_filename!r}): define it with def in a notebook cell or a file")
    if fn.__name__ == "<lambda>":
        raise ValueError("a lambda has no name to look up in another process: define the function "
                         "with def")
    return "".join(lines), fn.__name__


def load_function(source, name):
    """Run the preamble and ``source`` (with ``check`` a no-op) and return the function ``name``."""
    namespace = {"__name__": "__gemmlab_lab__", "check": lambda *args, **kwargs: None}
    exec(compile(PREAMBLE, "<preamble>", "exec"), namespace)
    exec(compile(source, "<student cell>", "exec"), namespace)
    fn = namespace.get(name)
    if not callable(fn):
        raise ValueError(f"the cell's source does not define a function named {name!r}")
    return fn
