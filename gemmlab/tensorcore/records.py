"""Benchmark results recorded on a real GPU, for showing on machines without one.

``benchmarks/gpu_tensorcore.sh`` writes ``benchmarks/tensorcore_h200.json``: the machine (GPU,
driver, versions, date), correctness checks, the accumulation probes and the timings. The lesson
shows those numbers on the simulator, labelled as recorded, with the machine they come from; when
no file has been recorded, it says so instead of showing any number. Load it with
``gl.measure.recorded(RECORD_NAME, SECTIONS)``; this module reads what it holds.
"""
RECORD_NAME = "tensorcore_h200.json"
SECTIONS = ("machine", "performance")   # what ``gl.measure.recorded(RECORD_NAME, SECTIONS)`` checks


def label(record):
    """One line naming where and when a record was measured."""
    m = record["machine"]
    driver = m.get("driver") or m.get("cuda_driver_api", "?")
    return (f"recorded on {m.get('gpu', '?')} (driver {driver}, CUDA runtime "
            f"{m.get('cuda_runtime', '?')}, CuPy {m.get('cupy', '?')}) on {m.get('date', '?')}")


def performance_rows(record, n=None):
    """The timing rows of a record (optionally only size n), sorted by TFLOP/s, fastest first."""
    rows = [r for r in record["performance"] if n is None or r["n"] == n]
    return sorted(rows, key=lambda r: -r["tflops"])
