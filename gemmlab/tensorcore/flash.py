"""Lesson 16's fused attention kernel on Tensor Cores: CUDA C++ source, compilation, launch.

The kernel is ``flash_attention.cu`` (mma.sync m16n8k16, cp.async, FP16 or BF16 in, FP32
statistics and accumulators); :func:`kernel_source` appends one ``extern "C"`` wrapper per
configuration (format, head width D, warps per block, causal or not). It compiles with NVRTC
(``gl.cudacompile``) for sm_80 and newer, and runs through CuPy on arrays laid out as
[batch x heads, N, D] (torch's ``scaled_dot_product_attention`` layout with batch and heads
merged). CuPy is imported only in :func:`attention`, so this module imports anywhere.
"""
import math
from pathlib import Path

from .. import cudacompile
from ..perfmodel.hardware import sm_resources

SOURCE = Path(__file__).with_name("flash_attention.cu")
FORMATS = {"fp16": "fp16_t", "bf16": "bf16_t"}
HEAD_DIMS = (64, 128)
WARPS = (4, 8)
ARCHES = ("sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120")   # m16n8k16 BF16 and cp.async
MIN_COMPUTE_CAPABILITY = (8, 0)
KEY_TILE, PAD = 64, 8               # the .cu's BC and PAD


def kernel_name(fmt, d, warps, causal):
    _check(fmt, d, warps)
    return f"flash_fwd_{fmt}_d{d}_w{warps}{'_causal' if causal else ''}"


def _check(fmt, d, warps):
    if fmt not in FORMATS:
        raise ValueError(f"format {fmt!r}: expected one of {', '.join(FORMATS)}")
    if d not in HEAD_DIMS:
        raise ValueError(f"head width d = {d!r}: the kernel is built for d in {HEAD_DIMS}")
    if warps not in WARPS:
        raise ValueError(f"warps = {warps!r}: expected one of {WARPS}")


def shared_bytes(d, warps):
    """Dynamic shared memory of one block: the Q tile and two K and two V tiles, padded rows."""
    return (16 * warps + 4 * KEY_TILE) * (d + PAD) * 2


def fits(d, warps, cc):
    """Whether one block's shared memory fits a GPU of compute capability ``cc``: d = 128 with
    8 warps (102 KiB) does not on the GPUs with 100 KiB per SM (sm_86, sm_89, sm_120)."""
    return shared_bytes(d, warps) <= sm_resources(cc).max_shared_per_block


def launch_bounds(warps):
    """The wrapper's __launch_bounds__: 8 warps ask for one block per SM, which lets a thread have
    up to 255 registers. Left to choose, NVRTC 13.0 held the BF16 d = 64 causal kernel to 128 and
    spilled 8 bytes (NVRTC 13.5 used 140 without spilling); at d = 128 one 8-warp block per SM is
    all the shared memory allows anyway."""
    return f"{32 * warps}, 1" if warps == 8 else f"{32 * warps}"


def kernel_source(configs):
    """The .cu source with one wrapper per (fmt, d, warps, causal) of ``configs``."""
    wrappers = []
    for fmt, d, warps, causal in configs:
        name = kernel_name(fmt, d, warps, causal)
        wrappers.append(
            f'extern "C" __global__ void __launch_bounds__({launch_bounds(warps)}) {name}('
            f"const u16* Q, const u16* K, const u16* V, u16* O, int N, float scale_log2) "
            f"{{ flash::forward<{FORMATS[fmt]}, {d}, {warps}, {str(bool(causal)).lower()}>"
            f"(Q, K, V, O, N, scale_log2); }}")
    return SOURCE.read_text(encoding="utf-8") + "\n" + "\n".join(wrappers) + "\n"


ALL_CONFIGS = tuple((f, d, w, c) for f in FORMATS for d in HEAD_DIMS for w in WARPS
                    for c in (False, True))


def grid(heads, N, warps):
    """(query tiles, heads): one block per 16 x warps query rows of one head."""
    return (math.ceil(N / (16 * warps)), heads)


def attention(Q, K, V, causal=False, warps=4, scale=None, arch=None):
    """O = softmax(Q K^T scale) V for CuPy arrays of shape (heads, N, d), float16 or bfloat16
    (bfloat16 given as uint16 bits with ``fmt`` taken from the dtype's name); returns O."""
    import cupy

    fmt, (heads, N, d) = check_operands(Q, K, V)
    cc = cupy.cuda.Device().compute_capability
    if not fits(d, warps, (int(cc[:-1]), int(cc[-1]))):
        raise ValueError(f"d = {d} with {warps} warps needs {shared_bytes(d, warps)} bytes of "
                         f"shared memory per block, more than sm_{cc} gives one block: use 4 warps")
    fn = _function(fmt, d, warps, bool(causal), arch)
    O = cupy.empty_like(Q)
    scale = 1.0 / math.sqrt(d) if scale is None else scale
    fn(grid(heads, N, warps), (32 * warps,), (Q, K, V, O, cupy.int32(N),
                                               cupy.float32(scale * math.log2(math.e))),
       shared_mem=shared_bytes(d, warps))
    return O


def check_operands(Q, K, V):
    """(format, (heads, N, d)) of three arrays the kernels can read: one shape (heads, N, d), one
    dtype, C-contiguous (the kernels index rows of d values); else ValueError or TypeError."""
    if Q.ndim != 3 or K.shape != Q.shape or V.shape != Q.shape:
        raise ValueError(f"Q, K and V must have one shape (heads, N, d), got {Q.shape}, "
                         f"{K.shape}, {V.shape}")
    if K.dtype != Q.dtype or V.dtype != Q.dtype:
        raise TypeError(f"Q, K and V must have one dtype, got {Q.dtype}, {K.dtype}, {V.dtype}")
    for name, a in (("Q", Q), ("K", K), ("V", V)):
        if not a.flags.c_contiguous:
            raise ValueError(f"{name} is not C-contiguous (a transposed or sliced view?): the "
                             f"kernel reads rows of d values; pass a contiguous copy")
    return _format_of(Q), Q.shape


def _format_of(array):
    name = str(array.dtype)
    if name == "float16":
        return "fp16"
    if name in ("bfloat16", "uint16"):          # bf16 bits, as CuPy holds them
        return "bf16"
    raise TypeError(f"expected float16 or bfloat16 arrays, got {name}")


_loaded = {}


def _function(fmt, d, warps, causal, arch):
    import cupy

    from .. import cudadriver
    key = (fmt, d, warps, causal)
    if key not in _loaded:
        if arch is None:
            cc = cupy.cuda.Device().compute_capability
            arch = f"sm_{cc}"
        why = cudacompile.check_driver(cudadriver.driver_version())
        if why:
            raise RuntimeError(f"the fused attention kernel cannot load: {why}")
        path, _ = cudacompile.cached_cubin(kernel_source([key]), arch, name="flash_attention.cu")
        fn = cupy.RawModule(path=str(path)).get_function(kernel_name(*key))
        fn.max_dynamic_shared_size_bytes = shared_bytes(d, warps)
        _loaded[key] = fn
    return _loaded[key]
