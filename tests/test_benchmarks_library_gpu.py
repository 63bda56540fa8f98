"""benchmarks/library_gpu.py's interleaved timing, with the fair timer faked (it needs a GPU):
every launch is timed in turn, round after round, in the order asked, and each figure is the
median over all its rounds; the wall-clock span of each round is kept for the clock samples."""
import importlib
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))


@pytest.fixture
def library_gpu(monkeypatch):
    monkeypatch.setenv("CUPY_TF32", "1")          # the module sets it to 0; restored afterwards
    module = importlib.import_module("library_gpu")
    calls = []

    def fake_flushed_ms(launch, repeats, events):
        calls.append(launch())
        return [float(len(calls) * 10 + i) for i in range(repeats)]
    monkeypatch.setattr(module.measure, "flushed_ms", fake_flushed_ms)
    return module, calls


def test_launches_are_timed_in_turn_round_after_round(library_gpu):
    module, calls = library_gpu
    launches = {"a": lambda: "a", "b": lambda: "b", "c": lambda: "c"}
    samples, spans = module.interleaved_samples(launches, order=["c", "a", "b"], rounds=2,
                                                per_round=3)
    assert calls == ["c", "a", "b", "c", "a", "b"]
    assert samples["c"] == [[10.0, 11.0, 12.0], [40.0, 41.0, 42.0]]
    assert all(len(spans[k]) == 2 and all(s <= e for s, e in spans[k]) for k in launches)
    assert spans["c"][0][1] <= spans["a"][0][0]          # c's first round ended before a's began


def test_each_figure_is_the_median_over_all_its_rounds(library_gpu):
    module, calls = library_gpu
    ms = module.interleaved_ms({"x": lambda: "x", "y": lambda: "y"})
    per_round = module.REPEATS // module.ROUNDS
    assert calls == ["x", "y"] * module.ROUNDS
    # x's rounds are calls 1, 3, 5, ...: values 10k + i; the median of them all
    xs = sorted(10.0 * (2 * r + 1) + i for r in range(module.ROUNDS) for i in range(per_round))
    assert ms["x"] == pytest.approx((xs[len(xs) // 2 - 1] + xs[len(xs) // 2]) / 2)
