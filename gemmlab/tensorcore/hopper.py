"""The Hopper GEMM ladder (lesson 12, part 2): wgmma, TMA, mbarrier pipelines, warp specialisation.

Four kernels, one per step, all computing C = alpha A B + beta C_in with FP16 or BF16 A (M x K) and
B (K x N), FP32 accumulation and FP32 output, on 128 x 256 output tiles (``hopper_gemm.cu``):

========== ==================================================================================
stage      what the step adds
========== ==================================================================================
wgmma      warpgroup MMAs reading A and B from shared memory; ordinary copies, one buffer
tma        the Tensor Memory Accelerator fills a ring of buffers, each guarded by an mbarrier
ws         warp specialisation: a producer warpgroup copies, two consumer warpgroups compute
persistent one block per SM walks many tiles, so loads of the next tile overlap the last store
========== ==================================================================================

Everything that is not the kernel itself (the launch plan, the tile order, the tensor-map
parameters, the generated source) is plain Python and is tested on any machine. Running needs an
sm_90 GPU (H100/H200), CuPy (memory and streams), and nvcc or NVRTC for the sm_90a target; the
kernels are launched through the CUDA driver API (ctypes), since a tensor map is a 128-byte
by-value kernel parameter.

Shapes: TMA needs 16-byte row strides, so K and N must be multiples of 8 on the fast path; other
shapes are copied into zero-padded buffers first (the "padded path", which costs one extra copy
of A and B and is reported in ``Problem.padded``). Any M works (the TMA fills rows past M with
zeros and the epilogue writes only rows < M).
"""
import ctypes
import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import cudadriver, device
from . import operands

BM, BN, BK = 128, 256, 64            # output tile and K slice of every stage
B_BOX = 64                           # columns of B per TMA box (a 128-byte swizzled row)
ELEM_BYTES = 2                       # FP16 / BF16
ALIGN_ELEMS = operands.ROW_ELEMS     # 16-byte row strides for the TMA
PIPELINE_STAGES = 4                  # buffers in the ring of the tma / ws / persistent kernels
GROUP_M = 8                          # tile rows walked together by the persistent kernel (L2)
MIN_COMPUTE_CAPABILITY = (9, 0)
FORMATS = {"fp16": 6, "bf16": 9}     # -> CUtensorMapDataType (FLOAT16, BFLOAT16)
_SOURCE = Path(__file__).with_name("hopper_gemm.cu")


@dataclass(frozen=True)
class Stage:
    name: str
    threads: int                     # per block
    buffers: int                     # shared-memory buffers of one K slice (A + B tiles)
    uses_tma: bool
    specialised: bool                # a producer warpgroup beside two consumers
    persistent: bool
    adds: str                        # what this step changes, for tables and the lesson

    @property
    def stage_bytes(self):
        """Bytes of A and B tiles that one K slice moves into shared memory."""
        return (BM * BK + BK * BN) * ELEM_BYTES

    @property
    def smem_bytes(self):
        """Dynamic shared memory per block: the buffers, their mbarriers (8 bytes each: "full"
        per buffer, and "empty" too when warps are specialised), 1 KiB for alignment."""
        barriers = (1 + self.specialised) * self.buffers * 8 if self.uses_tma else 0
        return self.buffers * self.stage_bytes + barriers + 1024


STAGES = {
    "wgmma": Stage("wgmma", 256, 1, False, False, False,
                   "wgmma from shared memory, tiles copied with ordinary loads and stores"),
    "tma": Stage("tma", 256, PIPELINE_STAGES, True, False, False,
                 f"TMA copies into a ring of {PIPELINE_STAGES} buffers, one mbarrier each"),
    "ws": Stage("ws", 384, PIPELINE_STAGES, True, True, False,
                "a producer warpgroup copies, two consumer warpgroups compute"),
    "persistent": Stage("persistent", 384, PIPELINE_STAGES, True, True, True,
                        f"one block per SM over many tiles (groups of {GROUP_M} tile rows)"),
}
DEFAULT_STAGE = "persistent"


def get_stage(name):
    if name not in STAGES:
        raise ValueError(f"unknown Hopper stage {name!r}; the stages are {', '.join(STAGES)}")
    return STAGES[name]


def ceil_div(a, b):
    return -(-a // b)


def tile_coords(t, tiles_m, tiles_n, group_m=GROUP_M):
    """(tile row, tile column) of the t-th tile in the persistent kernel's grouped order: the
    same formula as ``tile_coords`` in hopper_gemm.cu (tested against each other through the
    kernel's output on a GPU, and for covering every tile once here)."""
    per_group = group_m * tiles_n
    first_m = (t // per_group) * group_m
    rows = min(tiles_m - first_m, group_m)
    return first_m + (t % per_group) % rows, (t % per_group) // rows


@dataclass(frozen=True)
class Plan:
    """How one stage runs an M x N x K problem: padding, grid, block, shared memory."""
    stage: Stage
    M: int
    N: int
    K: int
    Np: int                          # N and K padded to multiples of 8
    Kp: int
    sms: int                         # SMs on the device (the persistent grid)

    @property
    def padded(self):
        return (self.Np, self.Kp) != (self.N, self.K)

    @property
    def tiles(self):
        return ceil_div(self.M, BM), ceil_div(self.N, BN)

    @property
    def grid(self):
        tiles_m, tiles_n = self.tiles
        if self.stage.persistent:
            return (max(1, min(self.sms, tiles_m * tiles_n)), 1, 1)
        return (tiles_n, tiles_m, 1)

    @property
    def k_slices(self):
        return ceil_div(self.Kp, BK)

    def tensor_maps(self):
        """cuTensorMapEncodeTiled arguments (dims innermost first, byte strides, box) for A
        (M x Kp, K-major) and B (Kp x Np, N-major), both with the 128-byte swizzle."""
        return {"A": {"dims": (self.Kp, self.M), "strides": (self.Kp * ELEM_BYTES,),
                      "box": (BK, BM)},
                "B": {"dims": (self.Np, self.Kp), "strides": (self.Np * ELEM_BYTES,),
                      "box": (B_BOX, BK)}}


def plan(stage, M, N, K, sms=132):
    """The :class:`Plan` of ``stage`` for an M x N x K problem (``sms``: the device's SMs)."""
    st = get_stage(stage)
    for name, value in (("M", M), ("N", N), ("K", K)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise ValueError(f"{name} must be a non-negative whole number, got {value!r}")
    return Plan(st, int(M), int(N), int(K), operands.round_up(int(N), ALIGN_ELEMS),
                operands.round_up(int(K), ALIGN_ELEMS), int(sms))


# ---- source ----------------------------------------------------------------------------------

def _wgmma_function(fmt):
    """The m64n256k16 wgmma as a device function: 128 FP32 accumulators as "+f" operands."""
    acc = BN // 2
    regs = ", ".join(f"%{i}" for i in range(acc))
    accumulators = ", ".join(f'"+f"(d[{i}])' for i in range(acc))
    ptx_type = {"fp16": "f16", "bf16": "bf16"}[fmt]
    # scale-d is a predicate (1: accumulate into d); then scale A and B by +1; A not
    # transposed (K-major); B transposed (N-major, i.e. row-major K x N).
    return (
        "__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[ACC], u64 da, u64 db) {\n"
        "    asm volatile(\n"
        '        "{\\n.reg .pred accumulate;\\n"\n'
        f'        "setp.ne.b32 accumulate, %{acc + 2}, 0;\\n"\n'
        f'        "wgmma.mma_async.sync.aligned.m64n256k16.f32.{ptx_type}.{ptx_type} "\n'
        f'        "{{{regs}}}, %{acc}, %{acc + 1}, accumulate, 1, 1, 0, 1;\\n}}\\n"\n'
        f"        : {accumulators}\n"
        '        : "l"(da), "l"(db), "r"(1));\n'
        "}\n")


def kernel_source(fmt="fp16"):
    """The complete CUDA C++ source of the four kernels for input format ``fmt``."""
    if fmt not in FORMATS:
        raise ValueError(f"input format {fmt!r} is not supported; use one of {', '.join(FORMATS)}")
    body = _SOURCE.read_text().replace("// @WGMMA@", _wgmma_function(fmt))
    return f"#define HOPPER_STAGES {PIPELINE_STAGES}\n{body}\nHOPPER_ENTRY_POINTS({fmt})\n"


def kernel_name(stage, fmt):
    return f"hopper_{get_stage(stage).name}_{fmt}"


# ---- compilation -----------------------------------------------------------------------------

def _cache_dir():
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    path = Path(root) / "gemmlab" / "hopper"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _nvcc():
    for candidate in (shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if candidate and os.path.exists(candidate):
            return candidate
    return None


def compile_with_nvcc(source, nvcc):
    """(cubin bytes, ptxas report) from nvcc for sm_90a (wgmma and setmaxnreg need the 'a')."""
    with tempfile.TemporaryDirectory(prefix="gemmlab-hopper-") as tmp:
        src, out = Path(tmp) / "hopper.cu", Path(tmp) / "hopper.cubin"
        src.write_text(source)
        cmd = [nvcc, "-cubin", "-O3", "-std=c++17", "-gencode=arch=compute_90a,code=sm_90a",
               "-Xptxas", "-v", "-o", str(out), str(src)]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"nvcc failed:\n{done.stderr[-4000:]}")
        return out.read_bytes(), done.stderr


def compile_with_nvrtc(source):
    """(cubin bytes, log) from NVRTC through cuda-bindings (installed with numba-cuda)."""
    from cuda.bindings import nvrtc

    def ok(result):
        err, *rest = result
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise RuntimeError(f"NVRTC error {err}")
        return rest[0] if len(rest) == 1 else rest
    prog = ok(nvrtc.nvrtcCreateProgram(source.encode(), b"hopper_gemm.cu", 0, [], []))
    opts = [b"--gpu-architecture=sm_90a", b"-std=c++17", b"--ptxas-options=-v"]
    err, = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
    size = ok(nvrtc.nvrtcGetProgramLogSize(prog))
    log = b" " * size
    nvrtc.nvrtcGetProgramLog(prog, log)
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise RuntimeError(f"NVRTC failed:\n{log.decode(errors='replace')[-4000:]}")
    size = ok(nvrtc.nvrtcGetCUBINSize(prog))
    cubin = b" " * size
    nvrtc.nvrtcGetCUBIN(prog, cubin)
    return cubin, log.decode(errors="replace")


@functools.lru_cache(maxsize=None)
def cubin(fmt="fp16"):
    """The compiled kernels of one input format (cached on disk by the source's hash):
    (cubin bytes, how it was built)."""
    source = kernel_source(fmt)
    key = hashlib.sha256(source.encode()).hexdigest()[:16]
    path = _cache_dir() / f"hopper_{fmt}_{key}.cubin"
    if path.exists():
        return path.read_bytes(), "cache"
    nvcc = _nvcc()
    binary, log = compile_with_nvcc(source, nvcc) if nvcc else compile_with_nvrtc(source)
    path.write_bytes(binary)
    path.with_suffix(".log").write_text(log)
    return binary, "nvcc" if nvcc else "nvrtc"


# ---- the driver --------------------------------------------------------------------------------

class _Driver:
    """The few CUDA driver calls the launch needs (``gl.cudadriver``; CuPy owns the context)."""

    def __init__(self):
        self.lib = cudadriver.required()

    def check(self, result, what):
        cudadriver.check(result, what, self.lib)

    def load(self, binary):
        module = ctypes.c_void_p()
        self.check(self.lib.cuModuleLoadData(ctypes.byref(module), binary), "cuModuleLoadData")
        return module

    def function(self, module, name, smem_bytes):
        fn = ctypes.c_void_p()
        self.check(self.lib.cuModuleGetFunction(ctypes.byref(fn), module, name.encode()),
                   f"cuModuleGetFunction({name})")
        self.check(self.lib.cuFuncSetAttribute(fn, 8, smem_bytes),   # MAX_DYNAMIC_SHARED_SIZE
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
            tmap, FORMATS[fmt], rank, ctypes.c_void_p(address),
            (ctypes.c_uint64 * rank)(*dims), (ctypes.c_uint64 * (rank - 1))(*strides),
            (ctypes.c_uint32 * rank)(*box), (ctypes.c_uint32 * rank)(*([1] * rank)),
            0, 3, 3, 0),                      # no interleave, 128-byte swizzle, L2 256 B, zeros
            "cuTensorMapEncodeTiled")
        return tmap

    def launch(self, fn, grid, block, smem, stream, args):
        params = (ctypes.c_void_p * len(args))(*[ctypes.addressof(a) for a in args])
        self.check(self.lib.cuLaunchKernel(fn, *grid, *block, smem, ctypes.c_void_p(stream),
                                           params, None), "cuLaunchKernel")


@functools.lru_cache(maxsize=None)
def _driver():
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
    if (int(cc[:-1]), int(cc[-1])) < MIN_COMPUTE_CAPABILITY:
        return False, (f"this GPU has compute capability {cc[:-1]}.{cc[-1]}; wgmma and the TMA "
                       f"need 9.0 (H100, H200)")
    return True, ""


def _require():
    ok, reason = available()
    if not ok:
        raise RuntimeError(f"the Hopper kernels cannot run: {reason}")


@functools.lru_cache(maxsize=None)
def _module(fmt):
    import cupy
    cupy.cuda.Device().synchronize()          # the runtime has made the primary context current
    return _driver().load(cubin(fmt)[0])


@functools.lru_cache(maxsize=None)
def compiled(stage, fmt="fp16"):
    """The loaded kernel of one stage and format (a CUfunction handle)."""
    _require()
    return _driver().function(_module(fmt), kernel_name(stage, fmt), get_stage(stage).smem_bytes)


def kernel_attributes(stage, fmt="fp16"):
    """Registers per thread, local (spilled) bytes per thread, shared memory per block."""
    fn, drv = compiled(stage, fmt), _driver()
    return {"regs": drv.attribute(fn, 4), "local_bytes": drv.attribute(fn, 3),   # NUM_REGS, LOCAL
            "smem_bytes": get_stage(stage).smem_bytes, "buffers": get_stage(stage).buffers}


# ---- operands and launch -------------------------------------------------------------------------

@dataclass
class Problem:
    """Device operands of one GEMM and its launch, ready to run many times (for timing)."""
    plan: Plan
    fmt: str
    A: object                        # uint16 bit patterns, (M, Kp)
    B: object                        # (Kp, Np)
    C_in: object
    C_out: object
    alpha: float
    beta: float

    @property
    def padded(self):
        return self.plan.padded

    def launch(self):
        import cupy
        p, drv = self.plan, _driver()
        st = p.stage
        fn = compiled(st.name, self.fmt)
        ints = [ctypes.c_int(v) for v in (p.M, p.N)]
        ptrs = [ctypes.c_void_p(self.C_in.data.ptr), ctypes.c_void_p(self.C_out.data.ptr)]
        scal = [ctypes.c_float(self.alpha), ctypes.c_float(self.beta)]
        if st.uses_tma:
            maps = p.tensor_maps()
            args = [drv.tensor_map(self.fmt, self.A.data.ptr, **maps["A"]),
                    drv.tensor_map(self.fmt, self.B.data.ptr, **maps["B"]),
                    *ptrs, *ints, ctypes.c_int(p.Kp), *scal]
            if st.persistent:
                args.append(ctypes.c_int(GROUP_M))
        else:
            args = [ctypes.c_void_p(self.A.data.ptr), ctypes.c_void_p(self.B.data.ptr), *ptrs,
                    *ints, ctypes.c_int(p.Np), ctypes.c_int(p.Kp), *scal]
        drv.launch(fn, p.grid, (st.threads, 1, 1), st.smem_bytes,
                   cupy.cuda.get_current_stream().ptr, args)


def prepare(A, B, C=None, alpha=1.0, beta=0.0, stage=DEFAULT_STAGE):
    """Check the operands, copy (and if needed pad) them to the GPU: a :class:`Problem`."""
    _require()
    import cupy
    fmt, M, N, K = operands.check(A, B, C, beta)
    p = plan(stage, M, N, K, cupy.cuda.Device().attributes["MultiProcessorCount"])
    c_in, out = operands.output(cupy, M, N, C)
    return Problem(p, fmt, operands.device_bits(cupy, A, (M, p.Kp)),
                   operands.device_bits(cupy, B, (p.Kp, p.Np)), c_in, out, float(alpha),
                   float(beta))


def gemm(A, B, C=None, alpha=1.0, beta=0.0, stage=DEFAULT_STAGE):
    """C_out = alpha A B + beta C on the Hopper Tensor Cores (FP32 result). NumPy inputs give a
    NumPy result, CuPy inputs a CuPy one."""
    _require()
    import cupy
    problem = prepare(A, B, C, alpha, beta, stage)
    if problem.plan.M and problem.plan.N:
        problem.launch()
    host = all(isinstance(x, np.ndarray) for x in (A, B))
    return cupy.asnumpy(problem.C_out) if host else problem.C_out


# ---- the pipeline model of the TMA ring, and the kernel's source --------------------------------

@dataclass(frozen=True)
class SlotEvent:
    """One use of a ring buffer: K slice ``slice`` in slot ``slot`` (its ``phase``-th use, so the
    mbarriers' parity is ``phase % 2``). The TMA fills it from ``load_start`` to ``full_at`` (the
    "full" barrier's phase completes), wgmma reads it until ``empty_at`` (the consumers arrive on
    the "empty" barrier and the producer may refill the slot)."""
    slice: int
    slot: int
    phase: int
    load_start: float
    full_at: float
    compute_start: float
    empty_at: float


def ring_events(n, t_load, t_compute, stages, latency=0.0):
    """The slot-by-slot story of ``n`` K slices through a ring of ``stages`` buffers, from the
    course's load/compute pipeline model (``gl.perfmodel.pipeline_schedule``): the copy engine
    issues a slice in ``t_load`` and it lands ``latency`` later, one consumer computes slices in
    order, a slot is refilled only after its last slice has been computed."""
    from ..perfmodel import pipeline_schedule
    bars = pipeline_schedule(n, t_load, t_compute, buffers=stages, latency=latency)
    loads = [b for b in bars if b.kind == "load"]
    computes = [b for b in bars if b.kind == "compute"]
    return [SlotEvent(i, i % stages, i // stages, ld.start, ld.end + latency, cp.start, cp.end)
            for i, (ld, cp) in enumerate(zip(loads, computes))]


def source_of(function):
    """The text of one function of hopper_gemm.cu (from its signature to its closing brace at the
    start of a line), e.g. ``source_of("produce")``, so a lesson can show a named step."""
    text = _SOURCE.read_text()
    at = text.find(f" {function}(")
    if at < 0:
        raise ValueError(f"hopper_gemm.cu has no function {function!r}")
    start = text.rfind("\n\n", 0, at) + 2
    end = text.index("\n}\n", at) + 3
    return text[start:end]
