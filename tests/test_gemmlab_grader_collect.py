"""Reading back what a notebook's runner sent: only checked fields come through, anything
malformed is refused with a reason, and a huge answers file is read in a confined process that
fails alone, never in the grader."""
import io
import json
import resource

import numpy as np
import pytest

from gemmlab_grader import answers, collect, sandbox
from gemmlab_grader.collect import check, pack
from gemmlab_grader.execute import COLLECT_LIMITS, NotebookRun, unnamed_file
from gemmlab_grader.integrity import PackageSnapshot
from gemmlab_grader.isolate import Isolation


def _output(report, answers_json):
    raw = answers_json if isinstance(answers_json, bytes) else json.dumps(answers_json).encode()
    return io.BytesIO(pack(json.dumps(report).encode()) + pack(raw))


def test_the_report_and_answers_come_back_checked():
    value = answers.encode(np.arange(6.0).reshape(2, 3))
    got = check(_output({"errors": [{"cell": 3, "ename": "E" * 500, "evalue": "v", "x": 1}],
                         "stopped": "", "output_bytes": 12, "forged": True},
                        {"answers": {"01.a": {"value": value}, "01.b": {"missing": True},
                                     "01.c": {"source": "def f(): pass", "name": "f"},
                                     "01.d": {"error": "could not be collected"}}}))
    assert got["problem"] == "" and got["run"]["errors"] == [{"cell": "3", "ename": "E" * 80,
                                                               "evalue": "v"}]
    assert "forged" not in got["run"] and got["run"]["output_bytes"] == 12
    assert np.array_equal(answers.decode(got["answers"]["01.a"]["value"]),
                          np.arange(6.0).reshape(2, 3))
    assert got["answers"]["01.b"] == {"missing": True}
    assert got["answers"]["01.c"] == {"source": "def f(): pass", "name": "f"}
    assert got["answers"]["01.d"] == {"error": "could not be collected"}


@pytest.mark.parametrize("raw, problem", [
    (b"", "the runner's report could not be read"),
    (pack(b"{not json") + pack(b""), "the runner's report could not be read"),
    (pack(b"[" * 100000) + pack(b""), "the runner's report could not be read"),
    (pack(b"x" * (collect.MAX_REPORT + 1)), "more than the"),
    (pack(b'{"stopped": ""}') + pack(b'{"answers": [1]}'), "not an object of answers"),
    (pack(b'{"stopped": ""}') + pack(b'{"answers": {"q": {"value": {"t": "list", "v": '
                                      + b"[" * 50000 + b"]" * 50000 + b"}}}}"), "could not be read back"),
])
def test_malformed_output_is_refused_with_the_reason(raw, problem):
    got = check(io.BytesIO(raw))
    assert got["answers"] is None and problem in got["problem"]


def test_one_budget_bounds_all_the_answers_together():
    many = {"t": "list", "v": [{"t": "int", "v": "0"}] * 600_000}
    got = check(_output({"stopped": ""}, {"answers": {"a": {"value": many}, "b": {"value": many}}}))
    assert "value" in got["answers"]["a"]
    assert "too deeply nested or too many items" in got["answers"]["b"]["error"]


@pytest.mark.slow
def test_a_120_mib_answers_file_is_refused_in_its_own_process_not_in_the_grader(tmp_path):
    package = PackageSnapshot().write_copy(tmp_path / "pkg")
    run = NotebookRun(tmp_path, None)
    huge = b'{"answers": {"01.weights_gib": {"value": {"t": "list", "v": [' \
           + b'{"t":"int","v":"0"},' * (120 * 2**20 // 20) + b'{"t":"none"}]}}}}'
    run.output = unnamed_file(tmp_path / "out", pack(b'{"stopped": ""}') + pack(huge))
    del huge
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    (tmp_path / "reading").mkdir()
    checked = run.collect(Isolation(package_root=str(package), limits=COLLECT_LIMITS,
                                    sandbox=sandbox.bwrap() is not None), tmp_path / "reading")
    run.close()
    # refused whole (out of memory there) or this answer alone (past the items budget)
    why = checked["problem"] or (checked["answers"] or {}).get("01.weights_gib", {}).get("error")
    assert "could not be read back" in why, checked
    assert "value" not in (checked["answers"] or {}).get("01.weights_gib", {})
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown < 200 * 1024, f"the test process grew by {grown} KiB"
