"""Lesson 16's last rung: fused attention on Hopper's warpgroup Tensor Cores (``flash_hopper.cu``).

The same tiled algorithm as :mod:`.flash` (online softmax, O in registers, S never in memory),
built as lesson 12b builds its GEMM: the TMA copies Q, K and V tiles into a ring of shared-memory
buffers guarded by mbarriers, a producer warpgroup issues the copies, two consumer warpgroups
compute S = Q K^T and O += P V with wgmma (P from registers), taking turns to issue them (the
"ping-pong": one's softmax runs while the other's products do; ``pingpong=False`` gives the
"_serial" kernels without it, for the lesson's comparison). sm_90a only (H100, H200); compiled by
NVRTC, one cubin per format, and launched through the CUDA driver (a tensor map is a by-value
kernel parameter). CuPy is imported only where a kernel runs, so this module imports anywhere.
"""
import ctypes
import functools
import math
from pathlib import Path

from .. import cudacompile
from .flash import FORMATS, check_operands
from .hopper import build

SOURCE = Path(__file__).with_name("flash_hopper.cu")
HEAD_DIMS = (64, 128)
QUERY_TILE = KEY_TILE = 128          # the .cu's BR and BC
STAGES = 2                           # K/V buffers in the ring
THREADS = 384                        # a producer and two consumer warpgroups
ARCH = build.ARCH
# (format, d, causal, ping-pong) of every kernel the two cubins hold
CONFIGS = tuple((f, d, c, p) for f in FORMATS for d in HEAD_DIMS for c in (False, True)
                for p in (True, False))


def kernel_source():
    """hopper_common.cuh and flash_hopper.cu: the source NVRTC builds, with a compile-time check
    that the shared memory the launch asks for (:func:`shared_bytes`) is what the kernel lays out."""
    checks = "".join(f"static_assert(flash_hopper::Layout<{d}>::BYTES == {shared_bytes(d)}, "
                     f'"shared_bytes({d}) in flash_hopper.py");\n' for d in HEAD_DIMS)
    return build.with_common(SOURCE.read_text(encoding="utf-8")) + "\n" + checks


def options(fmt):
    if fmt not in FORMATS:
        raise ValueError(f"format {fmt!r}: expected one of {', '.join(FORMATS)}")
    return (f"-DFLASH_BF16={int(fmt == 'bf16')}",)


def kernel_name(fmt, d, causal, pingpong=True):
    options(fmt)
    if d not in HEAD_DIMS:
        raise ValueError(f"head width d = {d!r}: the kernel is built for d in {HEAD_DIMS}")
    return f"flash_hopper_d{d}{'_causal' if causal else ''}{'' if pingpong else '_serial'}_{fmt}"


def shared_bytes(d):
    """Dynamic shared memory of one block: the Q tile, STAGES K and V tiles, the mbarriers, and
    1 KiB to align the tiles to the swizzle's 1024-byte groups (the .cu's Layout<D>::BYTES)."""
    tiles = (QUERY_TILE + 2 * STAGES * KEY_TILE) * d * 2
    return 1024 + tiles + 8 * (1 + 3 * STAGES)


def compile_format(fmt, arch=ARCH):
    """(path of the cubin, :class:`gl.cudacompile.Built` with NVRTC's log) for one format."""
    return cudacompile.cached_cubin(kernel_source(), arch, SOURCE.name, options(fmt))


def resources(fmt):
    """Registers, spills and stack of each kernel of ``fmt``, from ptxas' report."""
    return compile_format(fmt)[1].resources()


def grid(heads, N):
    """(query tiles, heads): one block per 128 query rows of one head."""
    return (math.ceil(N / QUERY_TILE), heads)


def attention(Q, K, V, causal=False, scale=None, pingpong=True):
    """O = softmax(Q K^T scale) V for CuPy arrays of shape (heads, N, d), float16 or bfloat16
    (as uint16 bits, which CuPy holds for bfloat16), on an sm_90 GPU; returns O."""
    from .hopper import run
    fmt, (heads, N, d) = check_operands(Q, K, V)
    if d not in HEAD_DIMS:
        raise ValueError(f"head width d = {d}: the Hopper kernel is built for d in {HEAD_DIMS}")
    ok, why = run.available()
    if not ok:
        raise RuntimeError(f"the Hopper attention kernel cannot run: {why}")
    import cupy

    drv = run.driver()
    fn = _function(fmt, d, bool(causal), bool(pingpong))
    O = cupy.empty_like(Q)
    if N == 0 or heads == 0:
        return O
    scale = 1.0 / math.sqrt(d) if scale is None else scale
    maps = [drv.tensor_map(fmt, a.data.ptr, dims=(d, N, heads), strides=(d * 2, N * d * 2),
                           box=(64, QUERY_TILE, 1)) for a in (Q, K, V)]
    args = [*maps, ctypes.c_void_p(O.data.ptr), ctypes.c_int(N),
            ctypes.c_float(scale * math.log2(math.e))]
    params = (ctypes.c_void_p * len(args))(*[ctypes.addressof(a) for a in args])
    drv.launch(fn, (*grid(heads, N), 1), (THREADS, 1, 1), shared_bytes(d),
               cupy.cuda.get_current_stream().ptr, params)
    return O


@functools.lru_cache(maxsize=None)
def _module(fmt):
    import cupy

    from .hopper import run
    cupy.cuda.Device().synchronize()          # the runtime has made the primary context current
    return run.driver().load(compile_format(fmt)[0])


@functools.lru_cache(maxsize=None)
def _function(fmt, d, causal, pingpong):
    from .hopper import run
    return run.driver().function(_module(fmt), kernel_name(fmt, d, causal, pingpong),
                                 shared_bytes(d))
