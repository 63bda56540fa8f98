"""The WMMA GEMM on a real GPU: CUDA C++ source, compilation, launch through CuPy.

The C++ template lives in ``wmma_gemm.cu``; :func:`kernel_source` appends one ``extern "C"``
wrapper per configuration (input format, accumulator format, :class:`~.tiling.Tiling`), so the
tile sizes come from the same Python objects the emulation uses.

The source is compiled by NVRTC for the GPU in hand (``gl.cudacompile``, cached on disk) and
loaded with ``cupy.RawModule``; CuPy is imported only then, so this module imports (and
:func:`kernel_source` works) on machines without CuPy or a GPU. :func:`support` says, for any
compute capability, which variants run there and why not.
"""
import functools
import importlib.util
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import cudacompile, cudadriver, device
from . import operands
from .tiling import DEFAULT, VECTOR_ELEMS, get_tiling

INPUT_TYPES = {"fp16": "fp16_t", "bf16": "bf16_t"}
ACC_TYPES = {"fp32": "float", "fp16": "fp16_t"}
GROUP_M = 8                     # tile rows per group in the block order (L2 reuse)
MIN_COMPUTE_CAPABILITY = (7, 5)  # Turing: FP16 WMMA with plain copies (no cp.async before 8.0)
BF16_COMPUTE_CAPABILITY = (8, 0)  # BF16 Tensor Cores and cp.async: Ampere and newer
SOURCE = Path(__file__).with_name("wmma_gemm.cu")
_compile_log = {}


def kernel_name(tiling=DEFAULT, fmt="fp16", acc="fp32"):
    _check_formats(fmt, acc)
    return f"wmma_{fmt}_{acc}_{get_tiling(tiling).name}"


def _check_formats(fmt, acc):
    if fmt not in INPUT_TYPES:
        raise ValueError(f"input format {fmt!r} is not supported; use one of {', '.join(INPUT_TYPES)}")
    if acc not in ACC_TYPES:
        raise ValueError(f"accumulator {acc!r} is not supported; use one of {', '.join(ACC_TYPES)}")
    if acc == "fp16" and fmt != "fp16":
        raise ValueError("an FP16 accumulator is only available with FP16 inputs")


def kernel_source(tiling=DEFAULT, fmt="fp16", acc="fp32"):
    """The complete CUDA C++ source of one kernel configuration."""
    t = get_tiling(tiling)
    name = kernel_name(t, fmt, acc)
    T, Acc = INPUT_TYPES[fmt], ACC_TYPES[acc]
    wrapper = f"""
extern "C" __global__ void __launch_bounds__({t.threads}, {t.min_blocks_per_sm})
{name}(const {T}* A, const {T}* B, const float* C_in, float* C_out, int M, int N, int K,
       int lda, int ldb, int ldc, float alpha, float beta, int group_m) {{
    gemmlab_wmma::gemm<{T}, {Acc}, {t.block_m}, {t.block_n}, {t.block_k}, {t.warps_m}, {t.warps_n},
                       {t.stages}, {'true' if t.fragment_prefetch else 'false'}>(
        A, B, C_in, C_out, M, N, K, lda, ldb, ldc, alpha, beta, group_m);
}}
"""
    return SOURCE.read_text(encoding="utf-8") + wrapper


def why_not(cc, fmt="fp16", tiling=DEFAULT):
    """None when the WMMA kernel of ``fmt`` runs on compute capability ``cc`` (a pair), else
    why not. ``tiling``'s shared memory must also fit the GPU's per-block limit: checked at launch,
    where the GPU's own limit is known."""
    cc = tuple(cc)
    if cc < MIN_COMPUTE_CAPABILITY:
        return (f"compute capability {cc[0]}.{cc[1]}: the WMMA kernel needs 7.5 (Turing) or newer "
                f"(older Tensor Cores, 7.0, are not targeted by CUDA 13)")
    if fmt == "bf16" and cc < BF16_COMPUTE_CAPABILITY:
        return (f"compute capability {cc[0]}.{cc[1]}: BF16 Tensor Cores need 8.0 (Ampere) or "
                f"newer; use FP16 inputs here")
    return None


def available(fmt="fp16"):
    """(True, "") when the real kernel for ``fmt`` inputs can run here, else (False, why)."""
    if device.backend() != "gpu":
        return False, ("the simulator backend is active: the Tensor Core kernel needs a real NVIDIA "
                       "GPU (the lesson uses the NumPy emulation instead)")
    if importlib.util.find_spec("cupy") is None:
        return False, ("CuPy is not installed: the Tensor Core kernel is launched through CuPy "
                       "(pip install cupy-cuda12x or cupy-cuda13x, matching your driver)")
    why = why_not(_compute_capability(), fmt)
    if why:
        return False, f"this GPU has {why}"
    ok, why = cudacompile.available()
    if not ok:
        return False, why
    why = cudacompile.check_driver(cudadriver.driver_version())
    return (False, why) if why else (True, "")


def _compute_capability():
    import cupy
    cc = cupy.cuda.Device().compute_capability     # e.g. "90"
    return int(cc[:-1]), int(cc[-1])


def _require_gpu(fmt="fp16"):
    ok, reason = available(fmt)
    if not ok:
        raise RuntimeError(f"the real Tensor Core kernel cannot run: {reason}")


COPIES = {"auto": (), "plain": ("-DGEMMLAB_PLAIN_COPIES",)}


@functools.lru_cache(maxsize=None)
def compiled_kernel(tiling=DEFAULT, fmt="fp16", acc="fp32", copies="auto"):
    """The CuPy ``RawKernel`` of one configuration, compiled on first use (then cached).
    ``copies="plain"``: the Turing (7.5) path of loads and stores instead of cp.async, on any
    GPU (it is what a T4 runs; here it can be checked and timed on a newer GPU)."""
    if copies not in COPIES:
        raise ValueError(f"copies must be one of {', '.join(COPIES)}, got {copies!r}")
    _require_gpu(fmt)
    import cupy
    t = get_tiling(tiling)
    limit = cupy.cuda.Device().attributes["MaxSharedMemoryPerBlockOptin"]
    if t.smem_bytes > limit:
        raise ValueError(f"tiling {t.name!r} needs {t.smem_bytes} bytes of shared memory per block; "
                         f"this GPU allows {limit}: choose a smaller tiling")
    name = kernel_name(t, fmt, acc)
    arch = cudacompile.arch_name(_compute_capability())
    path, built = cudacompile.cached_cubin(kernel_source(t, fmt, acc), arch, SOURCE.name,
                                           COPIES[copies])
    fn = cupy.RawModule(path=str(path)).get_function(name)
    fn.max_dynamic_shared_size_bytes = t.smem_bytes
    _compile_log[name] = {"compiler": cudacompile.available()[1], "arch": arch, "copies": copies,
                          "resources": built.resources().get(name)}
    return fn


def compile_report():
    """How each compiled kernel was built: {name: {compiler, arch, resources}}."""
    return {k: dict(v) for k, v in _compile_log.items()}


def kernel_attributes(tiling=DEFAULT, fmt="fp16", acc="fp32", copies="auto"):
    """Registers per thread, spills (local bytes) and shared memory of a compiled kernel."""
    fn = compiled_kernel(tiling, fmt, acc, copies)
    attrs = fn.attributes
    return {"regs": attrs.get("num_regs"), "local_bytes": attrs.get("local_size_bytes"),
            "smem_bytes": get_tiling(tiling).smem_bytes}


@dataclass
class Problem:
    """Device operands of one GEMM, padded for 16-byte copies, ready to launch many times."""
    fn: object
    tiling: object
    A: object
    B: object
    C_in: object
    C_out: object
    M: int
    N: int
    K: int              # padded: a multiple of 8
    alpha: float
    beta: float

    def launch(self):
        t = self.tiling
        lda, ldb = self.A.shape[1], self.B.shape[1]
        args = (self.A, self.B, self.C_in, self.C_out, np.int32(self.M), np.int32(self.N),
                np.int32(self.K), np.int32(lda), np.int32(ldb), np.int32(self.N),
                np.float32(self.alpha), np.float32(self.beta), np.int32(GROUP_M))
        self.fn((t.grid(self.M, self.N),), (t.threads,), args, shared_mem=t.smem_bytes)


def prepare(A, B, C=None, alpha=1.0, beta=0.0, tiling=DEFAULT, acc="fp32", bits_as=None,
            copies="auto"):
    """Copy (and pad) the operands to the GPU and compile the kernel: a :class:`Problem`.

    A (M x K) and B (K x N) are FP16 or BF16 (both the same), NumPy or CuPy; C (M x N) is float32.
    uint16 arrays are accepted as raw bit patterns when ``bits_as`` names their format ("bf16":
    CuPy has no bfloat16 dtype). K and N are padded with zeros to multiples of 8 when they are not
    (16-byte rows). ``copies``: see :func:`compiled_kernel`.
    """
    import cupy
    fmt, M, N, K = operands.check(A, B, C, beta, bits_as)
    _require_gpu(fmt)
    Kp, Np = operands.round_up(K, VECTOR_ELEMS), operands.round_up(N, VECTOR_ELEMS)
    dA = operands.device_bits(cupy, A, (M, Kp))
    dB = operands.device_bits(cupy, B, (Kp, Np))
    c_in, out = operands.output(cupy, M, N, C)
    fn = compiled_kernel(tiling, fmt, acc, copies)
    return Problem(fn, get_tiling(tiling), dA, dB, c_in, out, M, N, Kp, float(alpha), float(beta))


def gemm_gpu(A, B, C=None, alpha=1.0, beta=0.0, tiling=DEFAULT, acc="fp32"):
    """C_out = alpha A B + beta C on the Tensor Cores. NumPy inputs give a NumPy float32 result,
    CuPy inputs a CuPy one."""
    _require_gpu()
    import cupy
    problem = prepare(A, B, C, alpha, beta, tiling, acc)
    if problem.M and problem.N:
        problem.launch()
    host = all(isinstance(x, np.ndarray) for x in (A, B) if x is not None)
    return cupy.asnumpy(problem.C_out) if host else problem.C_out
