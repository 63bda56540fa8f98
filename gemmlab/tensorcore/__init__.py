"""Tensor Cores (lesson 12): a WMMA GEMM in CUDA C++, its NumPy emulation, and their numerics.

    C = gl.tensorcore.gemm(A16, B16)              # the real kernel on a GPU, else the emulation
    gl.tensorcore.engine()                        # which of the two "auto" picks here, and why
    D = gl.tensorcore.mma(a, b, c)                # one 16x16x16 step: D = A B + C
    gl.tensorcore.emulate(A16, B16, stats=True)   # the kernel's tiling, fragment by fragment
    gl.tensorcore.error_vs_k([16, 256, 4096])     # mixed-precision errors as K grows
    gl.tensorcore.support((7, 5))                 # which Tensor Core paths run on a GPU, or why not

Modules: ``tiling`` (block / warp / fragment sizes shared by kernel and emulation), ``kernel``
(C++ source, compilation with CuPy, launch), ``emulation``, ``numerics`` (models of one MMA step,
error experiments), ``probes`` (inputs that reveal how the hardware adds), ``paths`` (what runs
on which compute capability), ``mma_families`` (the MMA instruction families, WMMA to tcgen05),
``timing`` (cuBLAS baselines, timing summaries), ``records`` (benchmark results recorded on a GPU) and ``hopper``
(lesson 12's second part: the wgmma / TMA / warp-specialised ladder in ``hopper_gemm.cu``).
The WMMA kernel needs CuPy and an NVIDIA GPU of compute capability 7.5 or newer (BF16: 8.0), the
Hopper ladder an sm_90 GPU (H100, H200); both are compiled by NVRTC (``gl.cudacompile``);
everything else is NumPy and runs anywhere.
"""
from .. import device
from .emulation import Stats, emulate, emulate_steps, mma, ownership
from .kernel import available, compile_report, gemm_gpu, kernel_source
from .paths import support
from .numerics import (AlignTruncate, accumulation_bound, blocked_dot, error_vs_k, ones_stall,
                       ones_sum, round_inputs, truncation_bound)
from .tiling import (DEFAULT, FAST, LESSON, TILINGS, Tiling, elements_per_lane, get_tiling,
                     hierarchy, scalars_per_thread)

ENGINES = ("auto", "gpu", "emulation")


def engine():
    """("gpu" or "emulation", why): what ``gemm(..., engine="auto")`` runs on this machine."""
    ok, reason = available()
    return ("gpu", "CuPy and a GPU are available") if ok else ("emulation", reason)


def hopper_gemm(A, B, C=None, alpha=1.0, beta=0.0, stage=None, **options):
    """C_out = alpha A B + beta C with the Hopper ladder's kernel ``stage`` (default "auto": the
    stage and options that the problem's shape calls for, ``hopper.choose``; see
    ``gl.tensorcore.hopper.STAGES``; ``options``: tile_m, tile_n, split_k, out): FP16 or BF16 A and
    B, FP32 accumulation and output. On the simulator backend it computes the same numbers with the
    NumPy emulation of the Tensor Core arithmetic (exact products, FP32 sums in steps of 16 along K,
    as wgmma adds), like ``kernel="wmma"`` does; on a GPU that is not an sm_90 (H100/H200) it
    raises, saying so. FP8 (E4M3) inputs, the FP8 rung, run on an sm_90 GPU only: how FP8 wgmma adds
    its products is not documented, so there is no emulation to stand in for it."""
    from . import hopper
    stage = stage or hopper.DEFAULT_STAGE
    if stage != hopper.AUTO:
        hopper.get_stage(stage)
    if hopper.available()[0] or device.backend() == "gpu":
        return hopper.gemm(A, B, C, alpha, beta, stage, **options)
    if any("float8" in str(x.dtype) for x in (A, B)):
        raise RuntimeError(f"FP8 inputs run on an sm_90 GPU only ({hopper.available()[1]}); the "
                           f"simulator's emulation covers FP16 and BF16")
    return emulate_steps(A, B, C, alpha, beta)


def gemm(A, B, C=None, alpha=1.0, beta=0.0, tiling=None, engine="auto", acc="fp32"):
    """C_out = alpha A B + beta C with FP16 (or BF16) A and B and an FP32 (or FP16) accumulator.

    ``engine="gpu"`` runs the WMMA kernel (``tiling`` defaults to the fast one), ``"emulation"``
    the NumPy emulation of the same tiling (default: the lesson's 32x32 tiles), and ``"auto"`` the
    kernel when it can run here, else the emulation. Returns a float32 array.
    """
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    use_gpu = engine == "gpu" or (engine == "auto" and available()[0])
    if use_gpu:
        return gemm_gpu(A, B, C, alpha, beta, tiling or DEFAULT, acc)
    return emulate(A, B, C, alpha, beta, tiling or LESSON, acc=acc)


__all__ = [
    "gemm", "hopper_gemm", "engine", "ENGINES", "mma", "emulate", "emulate_steps", "ownership", "Stats",
    "available", "gemm_gpu", "kernel_source", "compile_report", "support", "AlignTruncate", "error_vs_k",
    "blocked_dot", "accumulation_bound", "truncation_bound", "ones_sum", "ones_stall", "round_inputs", "Tiling",
    "TILINGS", "LESSON", "FAST", "DEFAULT", "get_tiling", "hierarchy", "scalars_per_thread",
    "elements_per_lane",
]
