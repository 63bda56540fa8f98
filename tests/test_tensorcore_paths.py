"""Which Tensor Core paths run on which GPU (``gl.tensorcore.support``) and what ``gemmlab doctor``
says about them: from the compute capability alone, so every listed GPU is checked here without
one."""
import pytest

import gemmlab as gl
from gemmlab.tensorcore import paths

EXPECTED = {            # compute capability -> (wmma_fp16, wmma_bf16, hopper)
    (7, 0): (False, False, False),   # V100: CUDA 13 builds nothing for it
    (7, 5): (True, False, False),    # T4: FP16 Tensor Cores, no cp.async, no BF16
    (8, 0): (True, True, False),     # A100
    (8, 6): (True, True, False),     # RTX 3090, A10
    (8, 9): (True, True, False),     # RTX 4090, L4
    (9, 0): (True, True, True),      # H100, H200
    (10, 0): (True, True, False),    # B200: no wgmma
    (12, 0): (True, True, False),    # RTX 5090
}


@pytest.mark.parametrize("cc", list(EXPECTED))
def test_each_gpu_runs_what_its_architecture_has(cc):
    found = gl.tensorcore.support(cc)
    assert tuple(found[p].runs for p in ("wmma_fp16", "wmma_bf16", "hopper")) == EXPECTED[cc]
    for p in found.values():
        assert p.detail and p.line().startswith(paths.PATHS[p.name])


def test_the_reasons_name_the_missing_feature():
    t4 = gl.tensorcore.support("7.5")
    assert "plain loads and stores" in t4["wmma_fp16"].detail and "cp.async" in t4["wmma_fp16"].detail
    assert "BF16 Tensor Cores need 8.0" in t4["wmma_bf16"].detail
    assert "sm_90a" in t4["hopper"].detail
    b200 = gl.tensorcore.support((10, 0))
    assert "10.0" in b200["hopper"].detail and "no other GPU" in b200["hopper"].detail
    assert "cp.async copies" in b200["wmma_fp16"].detail


@pytest.mark.parametrize("bad", ["9", "9.x", (9,), (9, 0, 1), (9, -1), (True, 0), 90, None])
def test_bad_compute_capabilities_are_refused(bad):
    with pytest.raises(ValueError, match="compute capability like"):
        gl.tensorcore.support(bad)


def test_doctor_lines_for_a_gpu_and_for_the_simulator():
    lines = paths.report("7.5", "gpu")
    assert lines[0].startswith("CUDA C++ compiler: ") and len(lines) == 4
    assert "runs, with plain loads" in lines[1] and "does not run" in lines[2]
    sim = paths.report(None, "sim")
    assert all("simulator backend" in line for line in sim[1:])


def test_doctor_prints_one_line_per_path_and_never_a_traceback(monkeypatch, capsys):
    from gemmlab import cli
    assert cli.main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert "tensor cores" in out and "CUDA C++ compiler" in out
    assert all(desc in out for desc in paths.PATHS.values())

    def broken(*_):
        raise OSError("libnvrtc.so.13: cannot open shared object file")
    monkeypatch.setattr(paths, "report", broken)
    assert cli.main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert "tensor_cores" in out and "check failed: OSError: libnvrtc" in out and "Traceback" not in out
