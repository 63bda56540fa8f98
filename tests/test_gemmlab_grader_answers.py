"""Values crossing between the grader and a student's process: what decode refuses (the
kernel's collection of the answers: tests/test_judging_collected.py)."""
import numpy as np
import pytest

from gemmlab.judging import values


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
