"""Reading back what a notebook's runner sent: only checked fields come through, anything
malformed is refused with a reason, and what the grader reads is small enough to parse in its
own process whatever its shape."""
import io
import json
import resource

import numpy as np
import pytest

from gemmlab.judging import values
from gemmlab_grader import answers
from gemmlab_grader.answers import check, pack
from gemmlab_grader.execute import NotebookRun


def _output(report, answers_json):
    raw = answers_json if isinstance(answers_json, bytes) else json.dumps(answers_json).encode()
    return io.BytesIO(pack(json.dumps(report).encode()) + pack(raw))


def test_the_report_and_answers_come_back_checked():
    value = values.encode(np.arange(6.0).reshape(2, 3))
    got = check(_output({"errors": [{"cell": 3, "ename": "E" * 500, "evalue": "v", "x": 1}],
                         "stopped": "", "output_bytes": 12, "forged": True},
                        {"answers": {"01.a": {"value": value}, "01.b": {"missing": True},
                                     "01.c": {"source": "def f(): pass", "name": "f"},
                                     "01.d": {"error": "could not be collected"}}}))
    assert got["problem"] == "" and got["run"]["errors"] == [{"cell": "3", "ename": "E" * 80,
                                                               "evalue": "v"}]
    assert "forged" not in got["run"] and got["run"]["output_bytes"] == 12
    assert np.array_equal(values.decode(got["answers"]["01.a"]["value"]),
                          np.arange(6.0).reshape(2, 3))
    assert got["answers"]["01.b"] == {"missing": True}
    assert got["answers"]["01.c"] == {"source": "def f(): pass", "name": "f"}
    assert got["answers"]["01.d"] == {"error": "could not be collected"}


@pytest.mark.parametrize("raw, problem", [
    (b"", "the runner's report could not be read"),
    (pack(b"{not json") + pack(b""), "the runner's report could not be read"),
    (pack(b"[" * 100000) + pack(b""), "the runner's report could not be read"),
    (pack(b"x" * (answers.MAX_REPORT + 1)), "more than the"),
    (pack(b'{"stopped": ""}') + pack(b'{"answers": [1]}'), "not an object of answers"),
    (pack(b'{"stopped": ""}') + pack(b'{"answers": {"q": {"value": {"t": "list", "v": '
                                      + b"[" * 50000 + b"]" * 50000 + b"}}}}"), "could not be read back"),
])
def test_malformed_output_is_refused_with_the_reason(raw, problem):
    got = check(io.BytesIO(raw))
    assert got["answers"] is None and problem in got["problem"]


def test_one_budget_bounds_all_the_answers_together():
    many = values.encode(np.zeros(answers.ANSWER_BYTES * 6 // 80))     # 0.6 of the budget
    got = check(_output({"stopped": ""}, {"answers": {"a": {"value": many}, "b": {"value": many}}}))
    assert "value" in got["answers"]["a"]
    assert "does not fit" in got["answers"]["b"]["error"]


@pytest.mark.parametrize("item", [b"[]", b"{}", b'{"t":"int","v":"0"}'])
def test_the_largest_output_read_of_the_worst_shape_stays_small_in_the_grader(tmp_path, item):
    """The grader reads a runner's output in its own process: the most it reads, made of the
    items that cost the most memory per byte, must not take a tenth of a GiB more."""
    body = b'{"answers": {"01.weights_gib": {"value": {"t": "list", "v": ['
    count = (answers.MAX_ANSWERS - len(body) - 8) // (len(item) + 1)
    forged = body + b",".join([item] * count) + b"]}}}}"
    assert len(forged) <= answers.MAX_ANSWERS
    run = NotebookRun(tmp_path, None)
    run.output.write(pack(b'{"stopped": ""}') + pack(forged))
    del forged
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    checked = run.collect()
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    run.close()
    assert isinstance(checked["problem"], str)
    assert grown < 150 * 1024, f"reading it took {grown >> 10} MiB more"


def test_an_output_larger_than_the_grader_reads_is_refused_unread(tmp_path):
    run = NotebookRun(tmp_path, None)
    run.output.write(b"[" * (answers.MAX_OUTPUT + 1))
    checked = run.collect()
    run.close()
    assert checked["answers"] is None and "more than the" in checked["problem"]
