"""gemmlab/attention/gpu_record.py reads benchmarks/attention_h100.json as benchmarks/
attention_gpu.py wrote it: its summary agrees with the script's own fastest backend and ratio."""
import pytest

from gemmlab import measure
from gemmlab.attention import gpu_record


@pytest.fixture(scope="module")
def record():
    return measure.recorded(gpu_record.RECORD_NAME, gpu_record.SECTIONS)


def test_every_row_summarises_to_the_scripts_fastest_backend_and_ratio(record):
    for raw in record["results"]:
        row = gpu_record.summary(raw)
        assert row["fastest"] == raw["fastest_sdpa"]
        assert row["of_fastest"] == pytest.approx(raw["ratio"], rel=1e-12)
        ours = {k: raw[k]["tflops"] for k in raw if k.startswith("ours_") and k != "ours_best"}
        assert row["ours"] == max(ours.values())
        assert row["rungs"]["mma.sync"]["tflops"] == max(ours.get("ours_w4", 0), ours["ours_w8"])
        for rung, entry in (("wgmma", "ours_wgmma"), ("wgmma ping-pong", "ours_wgmma_pingpong")):
            assert row["rungs"].get(rung, {}).get("tflops") == ours.get(entry)


def test_the_record_spans_the_issues_grid_and_every_check_passed(record):
    shapes = {(r["B"], r["H"], r["N"], r["d"], r["fmt"], r["causal"]) for r in record["results"]}
    assert {N for _, _, N, *_ in shapes} == {1024, 2048, 4096, 8192, 16384}
    assert {(d, f, c) for *_, d, f, c in shapes} == {(d, f, c) for d in (64, 128)
                                                     for f in ("fp16", "bf16") for c in (False, True)}
    assert record["correctness"] and all(c["ok"] for c in record["correctness"])


def test_a_backend_that_failed_is_left_out_not_counted_as_zero():
    raw = {"B": 1, "H": 1, "N": 64, "d": 64, "fmt": "fp16", "causal": False, "ours_best": "w4",
           "ours_w4": {"tflops": 10.0}, "ours_wgmma": {"error": "not sm_90"},
           "sdpa_flash": {"error": "no kernel"},
           "sdpa_cudnn": {"tflops": 20.0}}
    row = gpu_record.summary(raw)
    assert row["sdpa"] == {"cudnn": 20.0} and row["of_fastest"] == 0.5 and row["of_flash2"] is None
    assert row["rungs"] == {"mma.sync": {"tflops": 10.0, "config": "w4"}}
