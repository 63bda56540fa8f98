"""Values crossing between the grader and a student's process: what decode refuses, and what
the kernel's collection of the answers keeps within the size the grader reads."""
import json

import numpy as np
import pytest

from gemmlab.judging import values
from gemmlab_grader import answers


def test_decode_refuses_forged_data():
    good = values.encode(np.arange(6.0).reshape(2, 3))
    for forged in [dict(good, shape=[7, 7]), dict(good, dtype="|O"), dict(good, b64="!!"),
                   {"t": "int", "v": "9" * 5000}, {"t": "list", "v": {"a": 1}},
                   {"t": "dict", "v": [[1, {"t": "none"}]]}, {"t": "what"}, [1, 2]]:
        with pytest.raises(values.DecodeError):
            values.decode(forged)
    deep = {"t": "none"}
    for _ in range(100):
        deep = {"t": "list", "v": [deep]}
    with pytest.raises(values.DecodeError, match="deeply"):
        values.decode(deep)


def test_the_answers_share_one_budget_and_a_too_large_one_is_named_not_collected(tmp_path):
    big = np.zeros(answers.ANSWER_BYTES // 8 + 1)           # one element past the budget
    path = tmp_path / "answers.json"
    answers.extract([{"id": "01.a", "answer_name": "a"}, {"id": "01.b", "answer_name": "b"}],
                    path, {"a": big, "b": 2.5})
    collected = json.loads(path.read_text())["answers"]
    assert collected["01.a"]["value"]["t"] == "opaque"
    assert "larger than" in collected["01.a"]["value"]["repr"]
    assert values.decode(collected["01.b"]["value"]) == 2.5
    assert path.stat().st_size < answers.MAX_ANSWERS
