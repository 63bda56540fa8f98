"""Run a kernel and get the picture of one of its blocks as plain data (:mod:`.observed`).

:func:`observe` runs on the simulator backend in this process; on a GPU backend (where the
simulator cannot run beside the real CUDA) in a fresh process that runs the kernel's notebook
cell on the simulator and sends back only the plain data, as the kernel labs' checks do
(:func:`gemmlab.judging.on_simulator.ask_simulator`). Lesson 03 draws its first kernels with it.
"""
import numpy as np

from .. import device


def observe(kernel, grid, block, args, timeout=60.0):
    """The plain data of one block of ``kernel[grid, block]`` run on ``args`` ((name, value)
    pairs, as for :func:`gemmlab.labs.simulator.simulate`: NumPy arrays and numbers): the block
    at fault, else the last. The arrays are not modified. On a GPU backend the kernel must be
    defined in a notebook cell (its cell is what the fresh process runs)."""
    if device.backend() == "sim":
        return observe_here(kernel, grid, block, args, timeout)
    from ..judging import code_of
    from ..judging.on_simulator import ask_simulator
    source, name = code_of(kernel)
    request = {"source": source, "name": name, "grid": _launch_dims(grid),
               "block": _launch_dims(block), "timeout": timeout,
               "args": [[str(n), _encode(v)] for n, v in args]}
    reply, why = ask_simulator(__name__, request, timeout + 60)
    if reply is None:
        raise RuntimeError(f"the kernel's run on the simulator {why}")
    if "error" in reply:
        raise RuntimeError(f"the kernel's cell did not run on the simulator: {reply['error']}")
    return reply["observed"]


def observe_here(kernel, grid, block, args, timeout=60.0):
    """:func:`observe` in this process (the simulator backend), on copies of the arrays."""
    from .simulator import simulate
    args = [(str(n), v.copy() if hasattr(v, "copy") else v) for n, v in args]
    return simulate(kernel, grid, block, args, time_limit=timeout).observed


def _launch_dims(d):
    return [int(v) for v in d] if isinstance(d, (tuple, list)) else int(d)


def _encode(value):
    if isinstance(value, np.ndarray):
        return {"dtype": value.dtype.str, "shape": list(value.shape), "data": value.ravel().tolist()}
    return {"scalar": value.item() if hasattr(value, "item") else value}


def _decode(value):
    if "scalar" in value:
        return value["scalar"]
    return np.array(value["data"], dtype=np.dtype(value["dtype"])).reshape(value["shape"])


def main():
    """The fresh process of :func:`observe` on a GPU backend: run the cell, observe, reply."""
    import json
    import os
    import sys

    from ..judging.source import run_cell
    reply_to = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)       # the cell's prints go nowhere
    request = json.loads(sys.stdin.read())
    namespace, error = run_cell(request["source"], "<your cell>")
    kernel = namespace.get(request["name"])
    if kernel is None:
        reply = {"error": f"{type(error).__name__}: {error}" if error else "no such kernel"}
    else:
        grid, block = (tuple(d) if isinstance(d, list) else d
                       for d in (request["grid"], request["block"]))
        args = [(n, _decode(v)) for n, v in request["args"]]
        reply = {"observed": observe_here(kernel, grid, block, args, request["timeout"])}
    reply_to.write(json.dumps(reply))
    reply_to.flush()


if __name__ == "__main__":
    main()
