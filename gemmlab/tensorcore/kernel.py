"""The WMMA GEMM on a real GPU: CUDA C++ source, compilation through CuPy, launch.

The C++ template lives in ``wmma_gemm.cu``; :func:`kernel_source` appends one ``extern "C"``
wrapper per configuration (input format, accumulator format, :class:`~.tiling.Tiling`), so the
tile sizes come from the same Python objects the emulation uses.

CuPy is imported only when a kernel is compiled or launched, so this module imports (and
:func:`kernel_source` works) on machines without CuPy or a GPU. Compilation tries NVRTC first, then
NVRTC with the CUDA toolkit's include directory (NVRTC cannot always find ``crt/mma.h``), then
nvcc; :func:`compile_report` says which route worked.
"""
import functools
import glob
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .. import device
from . import operands
from .tiling import DEFAULT, VECTOR_ELEMS, get_tiling

INPUT_TYPES = {"fp16": "__half", "bf16": "__nv_bfloat16"}
ACC_TYPES = {"fp32": "float", "fp16": "__half"}
GROUP_M = 8                     # tile rows per group in the block order (L2 reuse)
MIN_COMPUTE_CAPABILITY = (8, 0)  # cp.async and BF16 WMMA need Ampere or newer
_SOURCE = Path(__file__).with_name("wmma_gemm.cu")
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
    return _SOURCE.read_text() + wrapper


def available():
    """(True, "") when the real kernel can run here, else (False, the reason in words)."""
    if device.backend() != "gpu":
        return False, ("the simulator backend is active: the Tensor Core kernel needs a real NVIDIA "
                       "GPU (the lesson uses the NumPy emulation instead)")
    if importlib.util.find_spec("cupy") is None:
        return False, ("CuPy is not installed: the Tensor Core kernel is compiled and launched "
                       "through CuPy (pip install cupy-cuda12x or cupy-cuda13x, matching your driver)")
    cap = _compute_capability()
    if cap < MIN_COMPUTE_CAPABILITY:
        return False, (f"this GPU has compute capability {cap[0]}.{cap[1]}; the kernel uses cp.async "
                       f"and BF16 WMMA, which need {MIN_COMPUTE_CAPABILITY[0]}.0 (Ampere) or newer")
    return True, ""


def _compute_capability():
    import cupy
    cc = cupy.cuda.Device().compute_capability     # e.g. "90"
    return int(cc[:-1]), int(cc[-1])


def _require_gpu():
    ok, reason = available()
    if not ok:
        raise RuntimeError(f"the real Tensor Core kernel cannot run: {reason}")


def _cuda_include_dirs():
    """Directories that may hold ``crt/mma.h``: the toolkit, and NVIDIA's pip packages."""
    roots = [os.environ.get("CUDA_PATH"), os.environ.get("CUDA_HOME"), "/usr/local/cuda"]
    try:
        import cupy
        roots.append(cupy.cuda.get_cuda_path())
    except Exception:   # noqa: BLE001 - only a hint; an absent toolkit is not an error here
        pass
    found = []
    for root in filter(None, roots):
        inc = os.path.join(root, "include")
        if os.path.exists(os.path.join(inc, "crt", "mma.h")) and inc not in found:
            found.append(inc)
    spec = importlib.util.find_spec("nvidia")
    for base in (spec.submodule_search_locations or []) if spec else []:
        for hit in glob.glob(os.path.join(base, "*", "include", "crt", "mma.h")):
            inc = os.path.dirname(os.path.dirname(hit))
            if inc not in found:
                found.append(inc)
    return found


@functools.lru_cache(maxsize=None)
def compiled_kernel(tiling=DEFAULT, fmt="fp16", acc="fp32"):
    """The CuPy ``RawKernel`` of one configuration, compiled on first use (then cached)."""
    _require_gpu()
    import cupy
    t = get_tiling(tiling)
    name = kernel_name(t, fmt, acc)
    source = kernel_source(t, fmt, acc)
    routes = [("nvrtc", ())] + [("nvrtc", (f"-I{inc}",)) for inc in _cuda_include_dirs()]
    routes.append(("nvcc", ()))
    failures = []
    for backend, extra in routes:
        try:
            module = cupy.RawModule(code=source, options=("-std=c++17",) + extra, backend=backend)
            fn = module.get_function(name)
            fn.max_dynamic_shared_size_bytes = t.smem_bytes
        except Exception as exc:  # noqa: BLE001 - CompileException, missing nvcc, ...: try the next
            failures.append(f"{backend} {' '.join(extra)}".strip() + f": {_first_line(exc)}")
            continue
        _compile_log[name] = {"backend": backend, "options": list(extra),
                              "failed_first": failures[:]}
        return fn
    raise RuntimeError(f"could not compile {name}; tried:\n  " + "\n  ".join(failures))


def _first_line(exc):
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__


def compile_report():
    """How each compiled kernel was built: {name: {backend, options, failed_first}}."""
    return {k: dict(v) for k, v in _compile_log.items()}


def kernel_attributes(tiling=DEFAULT, fmt="fp16", acc="fp32"):
    """Registers per thread, spills (local bytes) and shared memory of a compiled kernel."""
    fn = compiled_kernel(tiling, fmt, acc)
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


def prepare(A, B, C=None, alpha=1.0, beta=0.0, tiling=DEFAULT, acc="fp32", bits_as=None):
    """Copy (and pad) the operands to the GPU and compile the kernel: a :class:`Problem`.

    A (M x K) and B (K x N) are FP16 or BF16 (both the same), NumPy or CuPy; C (M x N) is float32.
    uint16 arrays are accepted as raw bit patterns when ``bits_as`` names their format ("bf16":
    CuPy has no bfloat16 dtype). K and N are padded with zeros to multiples of 8 when they are not
    (16-byte rows).
    """
    _require_gpu()
    import cupy
    fmt, M, N, K = operands.check(A, B, C, beta, bits_as)
    Kp, Np = operands.round_up(K, VECTOR_ELEMS), operands.round_up(N, VECTOR_ELEMS)
    dA = operands.device_bits(cupy, A, (M, Kp))
    dB = operands.device_bits(cupy, B, (Kp, Np))
    c_in, out = operands.output(cupy, M, N, C)
    fn = compiled_kernel(tiling, fmt, acc)
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
