"""The benchmark harness: runs every rung, validates it, reports what it can measure and says what
it cannot. On the simulator (default) at tiny sizes; with GEMMLAB_BACKEND=gpu at a small real size."""
import json

import numpy as np
import pytest

import gemmlab as gl
from gemmlab import bench, cli

SIM = gl.device.backend() == "sim"
SIZE = 9 if SIM else 256
KEYS = {"kernel", "M", "N", "K", "ms", "tflops", "rel_err", "pct_of_cublas", "regs", "smem_bytes",
        "local_bytes", "timing", "intensity", "roofline_tflops", "bound", "pct_of_roofline"}


@pytest.fixture(scope="module")
def results():
    return bench.run(None, [SIZE], shapes=[(7, 5, 11)], repeats=2, progress=False)


def test_every_rung_is_validated_and_timed(results):
    rungs = [r for r in results if r["kernel"] != "cublas"]
    assert [r["kernel"] for r in rungs] == gl.kernels.names() * 2
    for r in results:
        assert KEYS <= set(r)
        assert r["rel_err"] < 1e-5, r
        assert r["ms"] > 0 and r["tflops"] == pytest.approx(2 * r["M"] * r["N"] * r["K"] / r["ms"] / 1e9)


def test_simulator_says_what_it_cannot_measure(results):
    if not SIM:
        pytest.skip("simulator only")
    for r in results:
        assert r["timing"] == bench.SIM_TIMING
        assert r["regs"] is None and r["smem_bytes"] is None and r["pct_of_cublas"] is None
    text = bench.table(results)
    assert "NOT GPU times" in text and "simulator: no cuBLAS" in text


def test_gpu_reports_resources_and_cublas(results):
    if SIM:
        pytest.skip("GPU only")
    for r in results:
        if r["kernel"] != "cublas":
            assert r["regs"] > 0 and r["local_bytes"] == 0, r     # no spills on any rung
            assert r["intensity"] > 0 and r["bound"] in ("memory", "compute")
    if bench.cublas_unavailable_reason() is None:
        assert any(r["kernel"] == "cublas" and r["pct_of_cublas"] == pytest.approx(100)
                   for r in results)
        for r in (r for r in results if r["kernel"] == "cublas"):   # the fastest, named
            assert r["ms"] == min(r["libraries_ms"].values()) and r["library"] in r["libraries_ms"]
        assert "fastest SGEMM library" in bench.table(results)


def test_kernel_specs_carry_tiles():
    assert bench.parse_kernel("outer:BM=64,BN=32") == ("outer", {"BM": 64, "BN": 32})
    with pytest.raises(ValueError, match="KEY=INT"):
        bench.parse_kernel("outer:BM")
    with pytest.raises(ValueError, match="unknown kernel"):
        bench.parse_kernel("fastest")
    with pytest.raises(ValueError, match="MxNxK"):
        bench.parse_shape("64x64")


def test_cli_writes_json(tmp_path, capsys):
    out = tmp_path / "bench.json"
    code = cli.main(["bench", "--kernels", "tiled", "outer:TM=4,TN=4", "--sizes", f"{SIZE}",
                     "--repeats", "2", "--quiet", "--out", str(out)])
    assert code == 0
    saved = json.loads(out.read_text())
    assert saved["machine"]["backend"] == gl.device.backend()
    rows = [r for r in saved["results"] if r["kernel"] != "cublas"]
    assert [r["kernel"] for r in rows] == ["tiled", "outer"]
    assert rows[1]["tiles"]["TM"] == 4
    assert "tiled" in capsys.readouterr().out
    assert np.isfinite([r["ms"] for r in rows]).all()


def test_wmma_is_benchmarked_on_fp16_inputs():
    from gemmlab import bench
    rows = bench.run(["wmma"], sizes=[16], repeats=1, warmup=0, progress=False)
    wmma = [r for r in rows if r["kernel"] == "wmma"]
    assert len(wmma) == 1 and wmma[0]["M"] == 16
    # error measured against float64 on the FP16-rounded inputs: FP32 accumulation only
    assert wmma[0]["rel_err"] < 1e-5
    assert "baseline_ms" not in wmma[0]


def test_hopper_specs_name_a_stage():
    assert bench.parse_kernel("hopper") == ("hopper", {"stage": "auto"})      # the shape's rule
    assert bench.parse_kernel("hopper:stage=tma") == ("hopper", {"stage": "tma"})
    with pytest.raises(ValueError, match="unknown Hopper stage"):
        bench.parse_kernel("hopper:stage=fast")
    with pytest.raises(ValueError, match="hopper:stage=NAME"):
        bench.parse_kernel("hopper:BM=64")


def test_cli_rejects_a_bad_kernel_spec_in_one_line(capsys):
    from gemmlab import cli
    assert cli.main(["bench", "--kernels", "hopper:stage=fast", "--sizes", "16"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gemmlab bench: unknown Hopper stage") and "Traceback" not in err


def test_hopper_rows_are_checked_against_their_fp16_inputs():
    rows = bench.run(["hopper:stage=ws"], sizes=[16], progress=False)
    row = next(r for r in rows if r["kernel"] == "hopper:ws")
    assert row["tiles"] == {"stage": "ws"} and row["rel_err"] < 1e-6 and row["ms"] > 0
