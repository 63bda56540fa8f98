"""Running a kernel where it lives and reporting what it did, as plain data.

* :func:`run_observed` is the run helper of the kernel labs: what a lab asks of the process that
  holds the student's kernel (:func:`gemmlab.judging.where.where_it_lives`; in a graded run and
  in ``check()``, a worker that holds only the kernel's source): run it on the simulator on the
  arrays it is sent and say what happened (:mod:`gemmlab.labs.observations`).
* :func:`observe` gets the picture of one block of any kernel (:mod:`.observed`): here on the
  simulator backend; on a GPU backend (where the simulator cannot run beside the real CUDA) in a
  fresh worker on the simulator that runs the kernel's notebook cell. Lesson 03 draws its first
  kernels with it.

It imports the simulator only when a run happens here, so a judging process on a GPU backend
never does.
"""
import numpy as np

from .. import device


def run_observed(kernel, arguments, grid, block, time_limit, observers=(), picture=True,
                 schedule=None):
    """Run helper (it runs where the kernel lives): launch ``kernel[grid, block]`` on the
    instrumented simulator with ``arguments`` ((name, value) pairs: arrays are the worker's own
    copies), watched by the ``observers`` named (:data:`gemmlab.labs.overlap.BUILDERS`), its
    threads and blocks taking turns in the order ``schedule`` says (plain data, see
    :func:`gemmlab.labs.simulator.simulate`); the launch's plain data
    (:func:`gemmlab.labs.observations.as_data`), with the picture of the run only if
    ``picture`` (a grade draws none, and one block's accesses are most of the data)."""
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
                     observer=observer, schedule=schedule)
    return as_data(trace, arrays, picture=bool(picture))


def observe(kernel, grid, block, args, timeout=60.0):
    """The plain data of one block of ``kernel[grid, block]`` run on ``args`` ((name, value)
    pairs, as for :func:`gemmlab.labs.simulator.simulate`: NumPy arrays and numbers): the block
    at fault, else the last. The arrays are not modified. On a GPU backend the kernel must be
    defined in a notebook cell (its cell is what the fresh worker runs)."""
    grid, block = _launch_dims(grid), _launch_dims(block)
    args = [[str(n), v] for n, v in args]
    if device.backend() == "sim":
        return observe_here(kernel, grid, block, args, timeout)
    from ..judging import code_of
    from ..judging.cell import CellFunction, plain_channel
    source, name = code_of(kernel)
    channel = plain_channel(timeout + 60)
    try:
        loaded = channel.request({"op": "load", "source": source, "name": name, "rules": None})
        if not loaded["ok"] or not loaded.get("callable"):
            error = loaded.get("error") or {}
            raise RuntimeError(f"the kernel's cell did not run on the simulator: "
                               f"{error.get('type', 'no such kernel')}: {error.get('message', '')}")
        return CellFunction(channel, name).call_helper(observe_here, grid, block, args, timeout)
    finally:
        channel.close()


def observe_here(kernel, grid, block, args, timeout=60.0):
    """Run helper: :func:`observe` in this process (the simulator backend), on copies of the
    arrays."""
    from .simulator import simulate
    args = [(str(n), v.copy() if hasattr(v, "copy") else v) for n, v in args]
    grid, block = (tuple(d) if isinstance(d, list) else d for d in (grid, block))
    return simulate(kernel, grid, block, args, time_limit=timeout).observed


def _launch_dims(d):
    return [int(v) for v in d] if isinstance(d, (tuple, list)) else int(d)
