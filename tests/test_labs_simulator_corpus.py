"""The race corpus (tests/simulator_corpus/): each kernel, racy or correct, run on the
instrumented simulator under the labs' three thread orders, gets the report its file names (a
correct one: no report, and the reference result); the GPU table of the same kernels under
compute-sanitizer (benchmarks/sanitizer_corpus.json) covers every kernel of the corpus."""
import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

import gemmlab as gl

if gl.device.backend() != "sim":
    pytest.skip("the instrumented simulator runs on the simulator backend", allow_module_level=True)
from gemmlab.labs.simulator import SCHEDULES, simulate  # noqa: E402

CORPUS = Path(__file__).parent / "simulator_corpus"
FILES = sorted(CORPUS.glob("k[0-9][0-9]_*.py"))
BENCHMARKS = Path(__file__).parent.parent / "benchmarks"
RECORD = BENCHMARKS / "sanitizer_corpus.json"
ORDERS = [order if order != "shuffled" else [order, 5] for order in SCHEDULES]


def load(path):
    """A corpus file (or the benchmark script) as a module."""
    spec = importlib.util.spec_from_file_location(f"corpus_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SCRIPT = load(BENCHMARKS / "sanitizer_corpus.py")     # its first_report is the table's


def test_the_corpus_has_thirty_kernels_racy_and_correct():
    modules = [load(p) for p in FILES]
    assert len(modules) >= 30
    assert sum(m.EXPECT is None for m in modules) >= 12
    assert sum(m.EXPECT is not None for m in modules) >= 12


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
@pytest.mark.parametrize("order", ORDERS, ids=lambda o: o if isinstance(o, str) else o[0])
def test_each_kernel_gets_its_report_under_every_order(path, order):
    case = load(path)
    args = case.inputs()
    grid, block, shared = case.LAUNCH
    trace = simulate(case.kernel, grid, block, list(args.items()), schedule=order,
                     shared_bytes=shared, time_limit=30)
    report = SCRIPT.first_report(trace)
    if case.EXPECT is None:
        assert report == ""
        np.testing.assert_array_equal(args["out"], case.reference(case.inputs()))
    else:
        assert case.EXPECT in report, report


def test_the_gpu_table_covers_the_corpus():
    """The recorded sanitizer run names every kernel of the corpus, each with the four tools'
    verdicts and whether its output differed from the reference or between two runs."""
    record = json.loads(RECORD.read_text())
    assert {"gpu", "driver", "date", "cuda", "numba_cuda"} <= set(record["machine"])
    rows = {row["kernel"]: row for row in record["kernels"]}
    assert set(rows) == {p.stem for p in FILES}
    for name, row in rows.items():
        assert set(row["tools"]) == {"racecheck", "initcheck", "memcheck", "synccheck"}, name
        assert isinstance(row["differs_from_reference"], bool)
        assert isinstance(row["differs_between_runs"], bool)
        assert row["racy"] == (load(CORPUS / f"{name}.py").EXPECT is not None)
        assert row["simulator"] == SCRIPT.simulator_report(name), name   # recorded = live
