"""The cuBLAS baselines the WMMA kernel is measured against, and the summary of its timings
(taken with ``gl.measure.flushed_ms(launch, events="cupy")``, the fair timer).

Needs CuPy and a GPU (imported when called). cuBLAS is called through ``cupy.cuda.cublas.gemmEx``
with explicit data and compute types, so each baseline is exactly what its name says:

=================  =============  ===========  ==================================================
name               inputs         output       compute type
=================  =============  ===========  ==================================================
cublas_fp16        FP16           FP32         CUBLAS_COMPUTE_32F (Tensor Cores, FP32 accumulate)
cublas_fp16_out16  FP16           FP16         CUBLAS_COMPUTE_32F (the common "HGEMM" output)
cublas_bf16        BF16           FP32         CUBLAS_COMPUTE_32F
cublas_tf32        FP32           FP32         CUBLAS_COMPUTE_32F_FAST_TF32 (Tensor Cores, TF32)
cublas_fp32        FP32           FP32         CUBLAS_COMPUTE_32F_PEDANTIC (CUDA cores, no TF32)
=================  =============  ===========  ==================================================
"""
import statistics

import numpy as np

# cudaDataType_t and cublasComputeType_t values (from the CUDA headers), used when CuPy does not
# export a name.
_CUDA_R_32F, _CUDA_R_16F, _CUDA_R_16BF = 0, 2, 14
_COMPUTE = {"32F": 68, "32F_PEDANTIC": 69, "32F_FAST_TF32": 77}

BASELINES = {
    # name: (input dtype name, output dtype name, compute type)
    "cublas_fp16": ("float16", "float32", "32F"),
    "cublas_fp16_out16": ("float16", "float16", "32F"),
    "cublas_bf16": ("bfloat16", "float32", "32F"),
    "cublas_tf32": ("float32", "float32", "32F_FAST_TF32"),
    "cublas_fp32": ("float32", "float32", "32F_PEDANTIC"),
}


def summary(times, M, N, K):
    """Median time and TFLOP/s (2 M N K flops) of a list of milliseconds per launch."""
    ms = statistics.median(times)
    return {"ms_median": ms, "ms_min": min(times), "runs": len(times),
            "tflops": 2.0 * M * N * K / (ms * 1e-3) / 1e12}


def _data_type(name):
    from cupy.cuda import runtime
    table = {"float32": ("CUDA_R_32F", _CUDA_R_32F), "float16": ("CUDA_R_16F", _CUDA_R_16F),
             "bfloat16": ("CUDA_R_16BF", _CUDA_R_16BF)}
    attr, value = table[name]
    return getattr(runtime, attr, value)


def _compute_type(name):
    from cupy.cuda import cublas
    return getattr(cublas, f"CUBLAS_COMPUTE_{name}", _COMPUTE[name])


def cublas_launcher(name, A, B, C):
    """A zero-argument function running baseline ``name`` on CuPy arrays: C = A B, row-major.

    A (M x K) and B (K x N) hold the input type (BF16 as uint16 bit patterns), C (M x N) the
    output type. Row-major C = A B is column-major C^T = B^T A^T, hence B first.
    """
    from cupy.cuda import cublas, device
    if name not in BASELINES:
        raise ValueError(f"unknown baseline {name!r}; known: {', '.join(BASELINES)}")
    in_type, out_type, compute = BASELINES[name]
    (M, K), N = A.shape, B.shape[1]
    handle = device.get_cublas_handle()
    alpha = np.ones(1, dtype=np.float32)
    beta = np.zeros(1, dtype=np.float32)
    t_in, t_out = _data_type(in_type), _data_type(out_type)
    ctype = _compute_type(compute)
    op_n = getattr(cublas, "CUBLAS_OP_N", 0)
    algo = getattr(cublas, "CUBLAS_GEMM_DEFAULT", -1)

    def launch():
        cublas.gemmEx(handle, op_n, op_n, N, M, K, alpha.ctypes.data, B.data.ptr, t_in, N,
                      A.data.ptr, t_in, K, beta.ctypes.data, C.data.ptr, t_out, N, ctype, algo)
    return launch


def baseline_operands(name, A16, B16):
    """CuPy operands for baseline ``name`` from FP16 (or BF16 bit-pattern) device inputs."""
    import cupy
    in_type, out_type, _ = BASELINES[name]
    if in_type == "float32":
        A, B = A16.astype(cupy.float32), B16.astype(cupy.float32)
    else:
        A, B = A16, B16
    out = cupy.empty((A.shape[0], B.shape[1]), dtype=cupy.float16 if out_type == "float16"
                     else cupy.float32)
    return A, B, out
