"""The Hopper GEMM ladder (lesson 12, part 2): wgmma, TMA, mbarrier pipelines, warp specialisation,
and the tile shapes and split-K that keep it fast at every problem shape.

Five kernels, one per step, all computing C = alpha A B + beta C_in with FP16 or BF16 A (M x K) and
B (K x N) and FP32 accumulation (``hopper_gemm.cu``):

========== ==================================================================================
stage      what the step adds
========== ==================================================================================
wgmma      warpgroup MMAs reading A and B from shared memory; ordinary copies, one buffer
tma        the Tensor Memory Accelerator fills a ring of buffers, each guarded by an mbarrier
ws         warp specialisation: a producer warpgroup copies, two consumer warpgroups compute
persistent one block per SM walks many tiles, so loads of the next tile overlap the last store;
           options: ``tile_n=128`` (more, smaller tiles), ``tile_m=64`` (64-row tiles, one
           consumer warpgroup each, for decode's few rows), ``split_k=S`` (S blocks share a
           tile's K range), ``out="fp16"``/``"bf16"`` (16-bit output, as cuBLAS's HGEMM),
           ``epilogue="staged"`` (128 x 256 tiles, 16-bit output: idle producer warps store C
           from shared memory while the consumers compute the next tile), ``cluster=2`` (128 x
           256 tiles in clusters of two blocks, one above the other, that share B's slices: each
           copies half and the TMA multicasts it to both)
pingpong   the two consumer warpgroups own alternate 128 x 128 tiles: one stores while the other
           computes (options ``split_k``, ``out``)
========== ==================================================================================

The FP8 rung: the persistent and pingpong kernels built for E4M3 inputs (``fmt="e4m3"`` in
:func:`plan`; ml_dtypes.float8_e4m3fn arrays in :func:`gemm`), FP32, BF16 or FP16 output, per-tensor
scales through ``alpha``. B is copied transposed (N x K) when the operands go to the device.

``stage="auto"`` (the default of :func:`gemm`) picks the stage and options from the problem's
shape by the rule of :func:`choose`.

Modules by concern: ``stages`` (the steps, tile shapes, launch plans and the rule; plain Python),
``build`` (the source and its NVRTC compilation for sm_90a), ``run`` (availability, loading through
the CUDA driver, operands and launch), ``pipeline`` (the TMA ring as a model).

Shapes: TMA needs 16-byte row strides, so K and N must be multiples of 8 on the fast path; other
shapes are copied into zero-padded buffers first (the "padded path", which costs one extra copy
of A and B and is reported in ``Problem.padded``). Any M works (the TMA fills rows past M with
zeros and the epilogue writes only rows < M).
"""
from .. import operands
from .build import compile_format, kernel_name, kernel_source, resources, runs_on, source_of
from .pipeline import SlotEvent, ring_events
from .run import Problem, attributes, available, compiled, gemm, kernel_attributes, prepare, result
from .stages import (AUTO, B_BOX, BK, BM, ELEM_BYTES, FORMATS, FP8, FP8_BK, GROUP_M, OUTPUTS,
                     PIPELINE_STAGES, SHAPES, STAGES, Plan, Shape, Stage, ceil_div, choose,
                     get_stage, plan, split_range, tile_coords)

BN = SHAPES["wide"].bn               # the ladder's first steps' tile width
DEFAULT_STAGE = AUTO

__all__ = [
    "AUTO", "BK", "BM", "BN", "B_BOX", "DEFAULT_STAGE", "ELEM_BYTES", "FORMATS", "FP8", "FP8_BK",
    "GROUP_M", "OUTPUTS", "PIPELINE_STAGES", "SHAPES", "STAGES", "Plan", "Problem", "Shape", "SlotEvent",
    "Stage", "attributes", "available", "ceil_div", "choose", "compile_format", "compiled", "gemm", "get_stage",
    "kernel_attributes", "kernel_name", "kernel_source", "operands", "plan", "prepare",
    "resources", "result", "ring_events", "runs_on", "source_of", "split_range", "tile_coords",
]
