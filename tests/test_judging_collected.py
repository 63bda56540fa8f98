"""The answers of a kernel as data (gemmlab.judging.collected.extract): values, sources of code
answers and why one could not be collected, all the values within one budget, inside what the
grader reads back."""
import json

import numpy as np

from gemmlab.judging import collected
from gemmlab.judging import values
from gemmlab_grader.answers import MAX_ANSWERS


def test_the_answers_share_one_budget_and_a_too_large_one_is_named_not_collected(tmp_path):
    big = np.zeros(collected.ANSWER_BYTES // 8 + 1)           # one element past the budget
    path = tmp_path / "answers.json"
    collected.extract([{"id": "01.a", "answer_name": "a"}, {"id": "01.b", "answer_name": "b"}],
                      path, {"a": big, "b": 2.5})
    got = json.loads(path.read_text())["answers"]
    assert got["01.a"]["value"]["t"] == "opaque"
    assert "larger than" in got["01.a"]["value"]["repr"]
    assert values.decode(got["01.b"]["value"]) == 2.5
    assert path.stat().st_size < MAX_ANSWERS


def test_extract_writes_values_sources_and_reasons(tmp_path):
    import linecache
    source = "def f(x):\n    return x\n"
    linecache.cache["<cell-7>"] = (len(source), None, source.splitlines(True), "<cell-7>")
    namespace = {}
    exec(compile(source, "<cell-7>", "exec"), namespace)
    namespace.update(g=namespace["f"], v=2.5, builtin=len)
    requests = [{"id": "a", "answer_name": "v"}, {"id": "b", "answer_name": "nothing"},
                {"id": "c", "answer_name": "g", "code": True},
                {"id": "d", "answer_name": "builtin", "code": True}]
    collected.extract(requests, tmp_path / "answers.json", namespace)
    got = json.loads((tmp_path / "answers.json").read_text())["answers"]
    assert got["a"] == {"value": {"t": "float", "v": "2.5"}}
    assert got["b"] == {"missing": True}
    assert got["c"] == {"source": source, "name": "f"}       # `g` is not assigned in that cell
    assert "expected a function defined in a notebook cell" in got["d"]["error"]

