"""observe(): a kernel's picture as plain data, run here on the simulator or, on a GPU backend,
in a fresh process on the simulator (gemmlab/labs/observe.py)."""
import re
from pathlib import Path

import nbformat
import numpy as np
import pytest

import gemmlab as gl

if gl.device.backend() != "sim":
    pytest.skip("compares the run here with the fresh process's", allow_module_level=True)
from gemmlab.judging import load_function  # noqa: E402
from gemmlab.labs import observe  # noqa: E402

SHIFT = '''@cuda.jit
def shift(a, out):
    s = cuda.shared.array(8, float32)
    t = cuda.threadIdx.x
    s[t] = a[t]
    out[t] = s[(t + 1) % 8]
'''


def test_observe_runs_here_on_the_simulator_and_in_a_fresh_process_on_a_gpu(monkeypatch):
    kernel = load_function(SHIFT, "shift", "<cell 7>")
    a = np.arange(8, dtype=np.float32)
    args = [("a", a), ("out", np.zeros(8, np.float32))]
    here = observe.observe(kernel, 1, 8, args)
    assert here["race"]["threads"] == [0, 1] and not args[1][1].any()     # arrays untouched
    monkeypatch.setattr(observe.device, "backend", lambda: "gpu")         # as in a GPU notebook
    there = observe.observe(kernel, 1, 8, args)
    assert there == here


NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
LESSONS_THAT_OBSERVE = sorted(p for p in NOTEBOOKS.glob("*.ipynb")
                              if "observe(" in p.read_text())


def observed_kernel_cells(path):
    """(kernel name, source of the cell defining it) for each kernel the lesson passes to observe()."""
    cells = [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    names = {name for source in cells for name in re.findall(r"\bobserve\(\s*(\w+)", source)}
    return [(name, source) for name in sorted(names) for source in cells
            if re.search(rf"^def {name}\(", source, re.M)]


@pytest.mark.parametrize("path", LESSONS_THAT_OBSERVE, ids=lambda p: p.stem)
def test_each_kernel_a_lesson_observes_is_defined_by_a_cell_that_runs_alone(path):
    # On a GPU backend observe() runs the kernel's cell in a fresh worker that has the exercises'
    # preamble and nothing the lesson defined before (lesson 05's worked transpose read ON_GPU
    # and rng there, and failed on the H200 with a NameError).
    from gemmlab.judging.source import run_cell
    found = observed_kernel_cells(path)
    assert found, "no kernel passed to observe() was found defined in a cell"
    for name, source in found:
        namespace, error = run_cell(source)
        assert error is None, f"{name}'s cell, run alone: {type(error).__name__}: {error}"
        assert name in namespace
