"""Benchmark results recorded on a real GPU, for showing on machines without one.

``benchmarks/gpu_tensorcore.sh`` writes ``benchmarks/tensorcore_h200.json``: the machine (GPU,
driver, versions, date), correctness checks, the accumulation probes and the timings. The lesson
shows those numbers on the simulator, labelled as recorded, with the machine they come from; when
no file has been recorded, it says so instead of showing any number.
"""
import json
from pathlib import Path

RECORD_NAME = "tensorcore_h200.json"


def record_path():
    """Where the recorded results live in a source checkout: <repo>/benchmarks/<RECORD_NAME>."""
    return Path(__file__).resolve().parents[2] / "benchmarks" / RECORD_NAME


def load(path=None):
    """The recorded results as a dict, or None when nothing has been recorded yet."""
    path = Path(path) if path is not None else record_path()
    if not path.exists():
        return None
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    if "machine" not in data or "performance" not in data:
        raise ValueError(f"{path} is not a Tensor Core benchmark record (no 'machine' or "
                         f"'performance' section)")
    return data


def label(record):
    """One line naming where and when a record was measured."""
    m = record["machine"]
    return (f"recorded on {m.get('gpu', '?')} (driver {m.get('driver', '?')}, CUDA runtime "
            f"{m.get('cuda_runtime', '?')}, CuPy {m.get('cupy', '?')}) on {m.get('date', '?')}")


def performance_rows(record, n=None):
    """The timing rows of a record (optionally only size n), sorted by TFLOP/s, fastest first."""
    rows = [r for r in record["performance"] if n is None or r["n"] == n]
    return sorted(rows, key=lambda r: -r["tflops"])
