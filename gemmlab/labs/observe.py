"""The run helper of the kernel labs: one instrumented launch where the kernel lives.

:func:`run_observed` is what a kernel lab asks of the process that holds the student's kernel
(:func:`gemmlab.judging.where.where_it_lives`): run it on the simulator on the arrays it is sent
and say what happened, as plain data (:mod:`gemmlab.labs.observations`). It imports the simulator
only when it runs, so the judging process, which may be on a GPU backend, never does.
"""
import numpy as np


def run_observed(kernel, arguments, grid, block, time_limit, observers=()):
    """Run helper (it runs where the kernel lives): launch ``kernel[grid, block]`` on the
    instrumented simulator with ``arguments`` ((name, value) pairs: arrays are the worker's own
    copies), watched by the ``observers`` named (:data:`gemmlab.labs.overlap.BUILDERS`); the
    launch's plain data (:func:`as_data`)."""
    from .observations import as_data
    from .overlap import build
    from .simulator import simulate
    named = [(str(name), value) for name, value in arguments]
    arrays = {}
    for name, value in named:
        if isinstance(value, np.ndarray):
            arrays.setdefault(name, value)
    observer = build(list(observers), arrays.get("A"), arrays.get("B"))
    trace = simulate(kernel, tuple(grid), tuple(block), named, time_limit=float(time_limit),
                     observer=observer)
    return as_data(trace, arrays)
