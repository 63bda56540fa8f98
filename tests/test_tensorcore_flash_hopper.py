"""gemmlab/tensorcore/flash_hopper.py and flash_hopper.cu: lesson 16's wgmma attention kernel builds
with NVRTC (no GPU needed) for sm_90a without spills, is refused elsewhere with the reason, asks for
the shared memory it lays out, and refuses operands it cannot read before any launch."""
import os

import numpy as np
import pytest

from gemmlab import cudacompile, device
from gemmlab.tensorcore import flash_hopper

NVRTC, WHY = cudacompile.available()
needs_nvrtc = pytest.mark.skipif(not NVRTC and not os.environ.get("CI"), reason=WHY)


@needs_nvrtc
@pytest.mark.parametrize("fmt", ["fp16", "bf16"])
def test_every_kernel_builds_for_sm90a_without_spills_within_its_registers(fmt):
    """The build also checks (static_assert) that shared_bytes() is the kernel's own layout."""
    found = flash_hopper.resources(fmt)
    for fmt_, d, causal, pingpong in flash_hopper.CONFIGS:
        if fmt_ != fmt:
            continue
        r = found[flash_hopper.kernel_name(fmt, d, causal, pingpong)]
        assert r["regs"] * flash_hopper.THREADS <= 65536
        assert (r["spill_stores"], r["spill_loads"], r["stack_bytes"]) == (0, 0, 0), r


@needs_nvrtc
def test_it_is_refused_where_wgmma_does_not_exist():
    with pytest.raises(cudacompile.CompileError, match="sm_90a only"):
        cudacompile.compile_source(flash_hopper.kernel_source(), "sm_80", "flash_hopper.cu",
                                   flash_hopper.options("fp16"))


def test_the_source_uses_the_instructions_lesson_12b_teaches():
    src = flash_hopper.kernel_source()
    for text in ("wgmma.mma_async.sync.aligned.m64n128k16.f32", "cp.async.bulk.tensor.3d",
                 "mbarrier.try_wait.parity", "setmaxnreg.inc", "p, 1, 1, 0, 0;",   # S: K-major B
                 "p, 1, 1, 1;",                                             # O: P in registers
                 "bar.sync %0, 256;", "bar.arrive %0, 256;"):               # the ping-pong
        assert text in src, text


def test_one_block_fits_an_sm90_and_the_grid_covers_ragged_n():
    for d in flash_hopper.HEAD_DIMS:
        assert flash_hopper.shared_bytes(d) <= 227 * 1024
    assert flash_hopper.grid(12, 1000) == (8, 12)         # 1000 rows in blocks of 128
    assert flash_hopper.grid(3, 128) == (1, 3)


@pytest.mark.parametrize("bad, match", [
    (("fp8", 64, False), "format"),
    (("fp16", 96, False), "built for"),
])
def test_a_configuration_it_was_not_built_for_is_refused(bad, match):
    with pytest.raises(ValueError, match=match):
        flash_hopper.kernel_name(*bad)


def _qkv(shape=(2, 77, 64), dtype=np.float16):
    return [np.zeros(shape, dtype) for _ in range(3)]


@pytest.mark.parametrize("make, error, match", [
    (lambda: [*_qkv()[:2], np.zeros((2, 76, 64), np.float16)], ValueError, "one shape"),
    (lambda: [*_qkv()[:2], np.zeros((2, 77, 64), np.float32)], TypeError, "one dtype"),
    (lambda: [np.zeros((2, 64, 77), np.float16).transpose(0, 2, 1), *_qkv()[1:]], ValueError,
     "Q is not C-contiguous"),
    (lambda: _qkv(dtype=np.float32), TypeError, "float16 or bfloat16"),
])
def test_operands_it_cannot_read_are_refused_before_any_launch(make, error, match):
    with pytest.raises(error, match=match):
        flash_hopper.attention(*make())


@pytest.mark.skipif(device.backend() == "gpu", reason="the GPU backend runs the kernel: "
                    "benchmarks/attention_gpu.py checks it there against float64")
def test_without_a_hopper_gpu_it_says_why():
    with pytest.raises(RuntimeError, match="simulator backend"):
        flash_hopper.attention(*_qkv())
