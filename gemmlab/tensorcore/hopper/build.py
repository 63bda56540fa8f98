"""The Hopper kernels' source and its compilation: hopper_gemm.cu, built by NVRTC
(``gl.cudacompile``) for sm_90a, one cubin per input format (``-DHOPPER_BF16=1`` for BF16;
``-DHOPPER_FP8=1`` for the FP8 rung, which writes FP32, BF16 or FP16), cached on disk. Works
without a GPU, so the build and its register report can be checked anywhere."""
from pathlib import Path

from ... import cudacompile
from .stages import FP8, MAP_TYPES

ARCH = "sm_90a"                     # wgmma and setmaxnreg need the architecture-specific target
SOURCE = Path(__file__).resolve().parent.parent / "hopper_gemm.cu"
COMMON = SOURCE.with_name("hopper_common.cuh")


def with_common(source):
    """``source`` (a Hopper kernel's .cu text) after hopper_common.cuh, the barriers, copies and
    wgmma helpers every Hopper kernel uses: one translation unit, which NVRTC builds alone."""
    return COMMON.read_text(encoding="utf-8") + "\n" + source


def kernel_source():
    """The CUDA C++ source of every Hopper GEMM kernel (every format: see :func:`options`)."""
    return with_common(SOURCE.read_text(encoding="utf-8"))


def options(fmt):
    if fmt not in MAP_TYPES:
        raise ValueError(f"input format {fmt!r} is not supported; use one of {', '.join(MAP_TYPES)}")
    if fmt == FP8:
        return ("-DHOPPER_FP8=1",)
    return (f"-DHOPPER_BF16={int(fmt == 'bf16')}",)


def kernel_name(kernel, fmt):
    """The entry point of ``kernel`` (a plan's ``kernel``, e.g. "hopper_pingpong") for ``fmt``."""
    options(fmt)
    return f"{kernel}_{fmt}"


def compile_format(fmt, arch=ARCH):
    """(path of the cubin, :class:`gl.cudacompile.Built` with NVRTC's log) for one format."""
    return cudacompile.cached_cubin(kernel_source(), arch, SOURCE.name, options(fmt))


def resources(fmt):
    """Registers, spills and stack of every kernel of ``fmt``, from ptxas' report."""
    return compile_format(fmt)[1].resources()


def source_of(function):
    """The text of one function of hopper_gemm.cu (from its signature to its closing brace at the
    start of a line), e.g. ``source_of("produce")``, so a lesson can show a named step."""
    text = kernel_source()
    at = text.find(f" {function}(")
    if at < 0:
        raise ValueError(f"hopper_gemm.cu has no function {function!r}")
    start = text.rfind("\n\n", 0, at) + 2
    end = text.index("\n}\n", at) + 3
    return text[start:end]


def runs_on(cc):
    """None when the sm_90a build runs on a GPU of compute capability ``cc`` (a pair), else why
    not. Architecture-specific code (the 'a') runs on that one architecture only: not on Ampere,
    and not on Blackwell (10.x, 12.x) either, which has no wgmma."""
    if tuple(cc) == (9, 0):
        return None
    return (f"compute capability {cc[0]}.{cc[1]}: the Hopper ladder is built for sm_90a (H100, "
            f"H200) only; wgmma and setmaxnreg exist on no other GPU")
