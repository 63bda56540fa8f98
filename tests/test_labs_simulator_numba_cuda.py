"""numba-cuda's own test suite on the instrumented simulator: the behaviour tests of the families
that exercise what a kernel does with threads and memory (test_sync, test_warp_ops, test_sm,
test_atomics, test_localmem, test_intrinsics), read from the installed numba-cuda, run as
numba-cuda runs them, with every launch they make routed through
:func:`gemmlab.labs.simulator.simulate`. Each must pass with its own assertions, and no launch
may get a report (a race, a fault, a read of memory nobody wrote), except the one kernel of the
suite that has a real bug (test_issue_2393), whose report is asserted.

Tests that numba-cuda skips on its own simulator because the feature is missing there (warp
primitives, syncwarp) run here; tests of the compiler rather than of a run (PTX, LLVM or SASS
text, typing errors) do not, nor the two that need what the instrumented simulator refuses
(listed in NOT_RUN with the reason).
"""
import importlib
import sys
import types
import unittest

import numpy as np
import pytest

import gemmlab as gl

if gl.device.backend() != "sim":
    pytest.skip("the instrumented simulator runs on the simulator backend", allow_module_level=True)

try:                            # numba-cuda's testing helpers import filecheck, which only its
    import filecheck  # noqa: F401     FileCheck tests of generated code use (none run here)
except ImportError:
    for _name in ("filecheck", "filecheck.matcher", "filecheck.options", "filecheck.parser",
                  "filecheck.finput"):
        _module = sys.modules[_name] = types.ModuleType(_name)
        for _attr in ("Matcher", "Options", "Parser", "pattern_for_opts", "FInput"):
            setattr(_module, _attr, None)

from numba.cuda.simulator import kernel as sim_kernel  # noqa: E402
from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray  # noqa: E402

from gemmlab.labs.simulator import simulate  # noqa: E402

FAMILIES = ("test_sync", "test_warp_ops", "test_sm", "test_atomics", "test_localmem",
            "test_intrinsics")
COMPILER_TESTS = ("const_mode_val", "type_validation", "nonliteral_grid", "_ptx",
                  "test_local_array")    # generated code (inspect_llvm/asm, compile_ptx), typing
NOT_RUN = {
    "test_localmem.TestCudaLocalMem.test_struct_model_type_arr":
        "a local array of a custom struct data model: no NumPy dtype to simulate it with",
    "test_localmem.TestCudaLocalMem.test_type_with_struct_data_model":
        "a custom struct data model (as above)",
    "test_intrinsics.TestCudaIntrinsic.test_fill3d_threadidx":
        "a Fortran-ordered array: the instrumented simulator takes C-contiguous arrays only",
}
REAL_BUG = {"test_sm.TestSharedMemoryIssue.test_issue_2393":
            "both wrote arg0[0] with different values in the same launch"}


def _cases():
    found = []
    for family in FAMILIES:
        module = importlib.import_module(f"numba.cuda.tests.cudapy.{family}")
        for suite in unittest.defaultTestLoader.loadTestsFromModule(module):
            for case in suite:
                name = case.id().split("cudapy.", 1)[1]
                if not any(word in name for word in COMPILER_TESTS) and name not in NOT_RUN:
                    found.append(name)
    return found


CASES = _cases()


def _unskipped(case):
    """The test case with the skips numba-cuda puts on features its own simulator lacks
    (skip_on_cudasim) lifted, in a subclass made for the run; every other skip stays."""
    cls, name = type(case), case._testMethodName
    attrs = {}
    if getattr(cls, "__unittest_skip__", False) and "cudasim" in \
            (cls.__unittest_skip_why__ or "").lower():
        attrs["__unittest_skip__"] = False
    method = getattr(cls, name)
    while (getattr(method, "__unittest_skip__", False) and hasattr(method, "__wrapped__")
           and "cudasim" in (method.__unittest_skip_why__ or "").lower()):
        method = method.__wrapped__
    if method is not getattr(cls, name):
        attrs[name] = method
    return type(cls.__name__, (cls,), attrs)(name) if attrs else case


@pytest.fixture
def instrumented(monkeypatch):
    """Every launch goes through the instrumented simulator; its reports are collected."""
    reports, plain_call = [], sim_kernel.FakeCUDAKernel.__call__

    def launch(kernel, *args):
        if kernel._device or sim_kernel._kernel_context:
            return plain_call(kernel, *args)
        named, names = [], {}
        for n, value in enumerate(args):
            value = value._ary if isinstance(value, FakeCUDAArray) else value
            name = names.setdefault(id(value), f"arg{n}") if isinstance(value, np.ndarray) \
                else f"arg{n}"
            named.append((name, value))
        trace = simulate(kernel, kernel.grid_dim, kernel.block_dim, named, time_limit=60,
                         shared_bytes=kernel.dynshared_size)
        if trace.fault is not None:
            reports.append(str(trace.fault))
            raise RuntimeError(str(trace.fault))
        if trace.races:
            reports.append(trace.races[0].describe())
        elif trace.uninitialized:
            reports.append(f"unwritten: {trace.uninitialized[0]}")

    monkeypatch.setattr(sim_kernel.FakeCUDAKernel, "__call__", launch)
    return reports


@pytest.mark.parametrize("name", CASES)
def test_numba_cuda_test_passes_on_the_instrumented_simulator(name, instrumented):
    family, cls_name, method = name.split(".")
    module = importlib.import_module(f"numba.cuda.tests.cudapy.{family}")
    case = _unskipped(getattr(module, cls_name)(method))
    result = unittest.TestResult()
    case.run(result)
    problems = [text for _, text in result.failures + result.errors]
    assert problems == [], problems[0]
    if result.skipped:
        pytest.skip(f"numba-cuda skips it: {result.skipped[0][1]}")
    if name in REAL_BUG:
        assert instrumented and REAL_BUG[name] in instrumented[0]
    else:
        assert instrumented == []


def test_the_families_hold_the_warp_and_dynamic_memory_tests():
    """The selection is not empty where it matters: warp primitives, syncwarp and dynamic
    shared slices are among the tests run."""
    assert len(CASES) >= 150
    for test in ("test_warp_ops.TestCudaWarpOperations.test_shfl_sync_down",
                 "test_warp_ops.TestCudaWarpOperations.test_activemask",
                 "test_sync.TestCudaSync.test_coop_syncwarp",
                 "test_sm.TestSharedMemory.test_dynshared_slice_write_backwards"):
        assert test in CASES
