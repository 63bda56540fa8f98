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
