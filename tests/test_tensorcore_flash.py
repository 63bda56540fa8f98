"""gemmlab/tensorcore/flash.py and flash_attention.cu: lesson 16's fused attention kernel builds
with NVRTC (no GPU needed) for every architecture it claims, with no spills, and refuses where its
instructions do not exist (Turing has no m16n8k16 BF16 MMA); its launch parameters fit a block."""
import os

import pytest

from gemmlab import cudacompile
from gemmlab.perfmodel.hardware import sm_resources
from gemmlab.tensorcore import flash

NVRTC, WHY = cudacompile.available()
pytestmark = pytest.mark.skipif(not NVRTC and not os.environ.get("CI"), reason=WHY)
SAMPLE = [("fp16", 128, 4, False), ("bf16", 64, 8, True)]


@pytest.mark.parametrize("arch", flash.ARCHES)
def test_the_kernel_builds_for_every_architecture_it_claims_without_spills(arch):
    """Without spills as NVRTC 13 builds it (the nvrtc extra, which .ci/run installs). NVRTC 12
    (numba-cuda's, a plain `make test`) spills a few bytes of the 8-warp BF16 build for sm_90:
    that build is then only checked to fit its registers, and the skip says so."""
    built = cudacompile.compile_source(flash.kernel_source(SAMPLE), arch, name="flash_attention.cu")
    found = built.resources()
    spilled = []
    for config in SAMPLE:
        r = found[flash.kernel_name(*config)]
        assert r["regs"] * 32 * config[2] <= 65536
        if r["spill_stores"] or r["spill_loads"] or r["stack_bytes"]:
            spilled.append((config, r))
    if spilled and cudacompile.version() < (13, 0):
        pytest.skip(f"NVRTC {cudacompile.version()} spills {spilled}; the kernel is built "
                    f"without spills by NVRTC 13 (pip install -e '.[nvrtc]')")
    assert spilled == []


def test_turing_is_refused_with_the_compilers_reason():
    with pytest.raises(cudacompile.CompileError, match="sm_75"):
        cudacompile.compile_source(flash.kernel_source(SAMPLE[1:]), "sm_75",
                                   name="flash_attention.cu")


@pytest.mark.parametrize("arch", flash.ARCHES)
def test_four_warps_fit_every_claimed_gpu_and_eight_at_d128_only_the_large_ones(arch):
    major, minor, _ = cudacompile.parse_arch(arch)
    limit = sm_resources((major, minor)).max_shared_per_block
    for d in flash.HEAD_DIMS:
        assert flash.fits(d, 4, (major, minor)) and flash.shared_bytes(d, 4) <= limit
    assert flash.fits(128, 8, (major, minor)) == (limit >= 102 * 1024) == (arch in (
        "sm_80", "sm_90", "sm_100"))


def test_the_grid_covers_ragged_n_and_every_head():
    assert flash.grid(12, 1000, 4) == (16, 12)          # 1000 rows in blocks of 64
    assert flash.grid(3, 64, 8) == (1, 3)


@pytest.mark.parametrize("bad", [("fp8", 64, 4), ("fp16", 96, 4), ("bf16", 64, 2)])
def test_a_configuration_it_was_not_built_for_is_refused(bad):
    with pytest.raises(ValueError, match="expected|built for"):
        flash.kernel_name(*bad, False)


def test_the_launch_path_loads_the_cubin_file_it_built(monkeypatch):
    """The first launch of a configuration builds its cubin and hands CuPy that file's path (the
    first GPU run found a tuple passed instead: CUDA_ERROR_FILE_NOT_FOUND). CuPy is faked here:
    its RawModule records the path and checks it is a cubin on disk."""
    import sys
    import types
    loaded = []

    class RawModule:
        def __init__(self, path):
            assert isinstance(path, str) and path.endswith(".cubin") and os.path.getsize(path) > 0
            loaded.append(path)

        def get_function(self, name):
            return types.SimpleNamespace(name=name)

    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(RawModule=RawModule))
    monkeypatch.setattr(flash, "_loaded", {})
    monkeypatch.setattr("gemmlab.cudadriver.driver_version", lambda: None)
    fn = flash._function("fp16", 64, 4, False, "sm_80")
    assert fn.name == flash.kernel_name("fp16", 64, 4, False) and len(loaded) == 1
    assert flash._function("fp16", 64, 4, False, "sm_80") is fn and len(loaded) == 1   # cached


def test_a_driver_older_than_the_compiler_is_refused_before_the_load(monkeypatch):
    import sys
    import types
    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace())     # never reached
    monkeypatch.setattr(flash, "_loaded", {})
    monkeypatch.setattr("gemmlab.cudadriver.driver_version", lambda: 11080)
    if cudacompile.version()[0] <= 11:
        pytest.skip("this NVRTC's cubins load on a CUDA 11 driver")
    with pytest.raises(RuntimeError, match="update the driver"):
        flash._function("fp16", 64, 4, False, "sm_80")
