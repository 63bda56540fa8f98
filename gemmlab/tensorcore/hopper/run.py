"""Running the Hopper kernels: whether they can run here, loading the cubin through the CUDA
driver (ctypes: a tensor map is a 128-byte by-value kernel parameter, which CuPy's launcher cannot
pass), the operands on the device, and the launch. CuPy holds the memory and the stream."""
import ctypes
import functools
from dataclasses import dataclass

import numpy as np

from ... import cudacompile, cudadriver, device
from .. import operands
from . import build
from .stages import FP8, FP8_OUTPUTS, GROUP_M, MAP_TYPES, plan

_MAX_DYNAMIC_SHARED = 8              # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
_NUM_REGS, _LOCAL_BYTES = 4, 3       # CU_FUNC_ATTRIBUTE_NUM_REGS, _LOCAL_SIZE_BYTES


class _Driver:
    """The few CUDA driver calls the launch needs (``gl.cudadriver``; CuPy owns the context)."""

    def __init__(self):
        self.lib = cudadriver.required()

    def check(self, result, what):
        cudadriver.check(result, what, self.lib)

    def load(self, path):
        module = ctypes.c_void_p()
        self.check(self.lib.cuModuleLoad(ctypes.byref(module), str(path).encode()), "cuModuleLoad")
        return module

    def function(self, module, name, smem_bytes):
        fn = ctypes.c_void_p()
        self.check(self.lib.cuModuleGetFunction(ctypes.byref(fn), module, name.encode()),
                   f"cuModuleGetFunction({name})")
        self.check(self.lib.cuFuncSetAttribute(fn, _MAX_DYNAMIC_SHARED, smem_bytes),
                   f"cuFuncSetAttribute({name})")
        return fn

    def attribute(self, fn, attr):
        value = ctypes.c_int()
        self.check(self.lib.cuFuncGetAttribute(ctypes.byref(value), attr, fn), "cuFuncGetAttribute")
        return value.value

    def tensor_map(self, fmt, address, dims, strides, box):
        tmap = (ctypes.c_ubyte * 128)()
        rank = len(dims)
        self.check(self.lib.cuTensorMapEncodeTiled(
            tmap, MAP_TYPES[fmt], rank, ctypes.c_void_p(address),
            (ctypes.c_uint64 * rank)(*dims), (ctypes.c_uint64 * (rank - 1))(*strides),
            (ctypes.c_uint32 * rank)(*box), (ctypes.c_uint32 * rank)(*([1] * rank)),
            0, 3, 3, 0),                      # no interleave, 128-byte swizzle, L2 256 B, zeros
            "cuTensorMapEncodeTiled")
        return tmap

    def launch(self, fn, grid, block, smem, stream, params):
        self.check(self.lib.cuLaunchKernel(fn, *grid, *block, smem, ctypes.c_void_p(stream),
                                           params, None), "cuLaunchKernel")


@functools.lru_cache(maxsize=None)
def driver():
    """The one :class:`_Driver` of this process: module loads, tensor maps and launches for every
    Hopper kernel (the GEMM ladder here, the attention kernel in tensorcore/flash_hopper.py)."""
    return _Driver()


def available():
    """(True, "") when the Hopper kernels can run here, else (False, the reason in words)."""
    if device.backend() != "gpu":
        return False, "the simulator backend is active: the Hopper kernels need an sm_90 GPU"
    try:
        import cupy
    except ImportError:
        return False, "CuPy is not installed (it holds the operands): pip install cupy-cuda12x or -13x"
    cc = cupy.cuda.Device().compute_capability
    why = build.runs_on((int(cc[:-1]), int(cc[-1])))
    if why:
        return False, f"this GPU has {why}"
    ok, why = cudacompile.available()
    if not ok:
        return False, why
    why = cudacompile.check_driver(cudadriver.driver_version())
    return (False, why) if why else (True, "")


def _require():
    ok, reason = available()
    if not ok:
        raise RuntimeError(f"the Hopper kernels cannot run: {reason}")


@functools.lru_cache(maxsize=None)
def _module(fmt):
    import cupy
    cupy.cuda.Device().synchronize()          # the runtime has made the primary context current
    return driver().load(build.compile_format(fmt)[0])


@functools.lru_cache(maxsize=None)
def compiled(kernel, fmt, smem_bytes):
    """The loaded kernel ``kernel`` (a plan's kernel name) of one format: a CUfunction handle."""
    _require()
    return driver().function(_module(fmt), build.kernel_name(kernel, fmt), smem_bytes)


def attributes(p, fmt="fp16"):
    """Registers per thread, local (spilled) bytes per thread, shared memory and buffers of the
    kernel that plan ``p`` launches."""
    fn, drv = compiled(p.kernel, fmt, p.smem_bytes), driver()
    return {"regs": drv.attribute(fn, _NUM_REGS), "local_bytes": drv.attribute(fn, _LOCAL_BYTES),
            "smem_bytes": p.smem_bytes, "buffers": p.stage.buffers if not p.stage.persistent
            else p.shape.buffers}


def kernel_attributes(stage, fmt="fp16", **options):
    """:func:`attributes` of a stage (with its options) for a 1024^3 problem."""
    return attributes(plan(stage, 1024, 1024, 1024, **options), fmt)


@dataclass
class Problem:
    """Device operands of one GEMM and its launch, ready to run many times (for timing): the
    kernel's parameters are built once, so a launch is one driver call."""
    plan: object
    fmt: str
    A: object                        # uint16 bit patterns, (M, Kp); FP8: uint8 bytes
    B: object                        # (Kp, Np); FP8: B transposed, (N, Kp)
    C_in: object
    C_out: object
    alpha: float
    beta: float
    group_m: int = GROUP_M
    partials: object = None          # split-K: FP32 partial sums and arrival counters
    counters: object = None

    @property
    def padded(self):
        return self.plan.padded

    def __post_init__(self):
        p, drv = self.plan, driver()
        self._fn = compiled(p.kernel, self.fmt, p.smem_bytes)
        ptr = [ctypes.c_void_p(self.C_in.data.ptr), ctypes.c_void_p(self.C_out.data.ptr)]
        scal = [ctypes.c_float(self.alpha), ctypes.c_float(self.beta)]
        if p.stage.uses_tma:
            maps = p.tensor_maps()
            args = [drv.tensor_map(self.fmt, self.A.data.ptr, **maps["A"]),
                    drv.tensor_map(self.fmt, self.B.data.ptr, **maps["B"]),
                    *ptr, ctypes.c_int(p.M), ctypes.c_int(p.N), ctypes.c_int(p.Kp), *scal]
            if p.stage.persistent:
                args += [ctypes.c_int(self.group_m), ctypes.c_int(p.split_k),
                         ctypes.c_void_p(self.partials.data.ptr if p.split_k > 1 else 0),
                         ctypes.c_void_p(self.counters.data.ptr if p.split_k > 1 else 0)]
        else:
            args = [ctypes.c_void_p(self.A.data.ptr), ctypes.c_void_p(self.B.data.ptr), *ptr,
                    ctypes.c_int(p.M), ctypes.c_int(p.N), ctypes.c_int(p.Np), ctypes.c_int(p.Kp),
                    *scal]
        self._args = args                    # kept alive: the driver reads them at each launch
        self._params = (ctypes.c_void_p * len(args))(*[ctypes.addressof(a) for a in args])

    def launch(self):
        import cupy
        p = self.plan
        driver().launch(self._fn, p.grid, (p.stage.threads, 1, 1), p.smem_bytes,
                         cupy.cuda.get_current_stream().ptr, self._params)


def prepare(A, B, C=None, alpha=1.0, beta=0.0, stage=None, group_m=GROUP_M, bits_as=None,
            **options):
    """Check the operands, copy (and if needed pad) them to the GPU: a :class:`Problem`. ``stage``
    None or "auto": the rule of ``stages.choose``; ``options``: tile_m, tile_n, split_k, out,
    epilogue. uint16 arrays count as raw bit patterns of ``bits_as`` ("bf16": CuPy has no
    bfloat16), uint8 arrays as E4M3 bytes with ``bits_as="e4m3"``. FP8 inputs (the FP8 rung): B is
    copied transposed (N x K, as FP8 wgmma reads it), and per-tensor scales go in through
    ``alpha``."""
    _require()
    import cupy
    fmt, M, N, K = operands.check(A, B, C, beta, bits_as, fp8=True)
    out = options.get("out", "fp32")
    allowed = FP8_OUTPUTS if fmt == FP8 else ("fp32", fmt)
    if out not in allowed:
        raise ValueError(f"out={out!r}: {fmt} inputs give {' or '.join(allowed)} output")
    p = plan(stage, M, N, K, cupy.cuda.Device().attributes["MultiProcessorCount"], fmt=fmt,
             **options)
    c_in, c_out = operands.output(cupy, M, N, C)
    if p.out != "fp32":
        c_out = cupy.full((M, N), 0x7FFF, dtype=cupy.uint16)        # NaN in FP16 and BF16
    partials = counters = None
    if p.split_k > 1:
        partials = cupy.empty(p.partial_floats, dtype=cupy.float32)
        counters = cupy.zeros(p.counters, dtype=cupy.int32)
    if fmt == FP8:
        a = operands.device_bits(cupy, A, (M, p.Kp), np.uint8)
        b = operands.device_bits(cupy, operands.device_bits(cupy, B, (K, N), np.uint8).T,
                                 (N, p.Kp), np.uint8)
    else:
        a = operands.device_bits(cupy, A, (M, p.Kp))
        b = operands.device_bits(cupy, B, (p.Kp, p.Np))
    return Problem(p, fmt, a, b, c_in, c_out, float(alpha), float(beta), int(group_m), partials,
                   counters)


def result(problem, host):
    """The problem's C_out: FP32, or the 16-bit format (a NumPy array of that dtype on the host;
    on the device, CuPy float16, or the raw uint16 bit patterns of BF16, which CuPy lacks)."""
    import cupy
    out = problem.C_out
    if problem.plan.out == "fp16":
        out = out.view(cupy.float16)
    if not host:
        return out
    out = cupy.asnumpy(out)
    if problem.plan.out == "bf16":
        import ml_dtypes
        out = out.view(ml_dtypes.bfloat16)
    return out


def gemm(A, B, C=None, alpha=1.0, beta=0.0, stage=None, **options):
    """C_out = alpha A B + beta C on the Hopper Tensor Cores. NumPy inputs give a NumPy result,
    CuPy inputs a CuPy one; FP32 unless ``out`` names the inputs' 16-bit format."""
    _require()
    problem = prepare(A, B, C, alpha, beta, stage, **options)
    if problem.plan.M and problem.plan.N:
        problem.launch()
    return result(problem, all(isinstance(x, np.ndarray) for x in (A, B)))
