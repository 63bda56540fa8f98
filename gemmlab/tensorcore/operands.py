"""What both Tensor Core launchers (the WMMA kernel and the Hopper ladder) do with their operands:
check FP16/BF16 A, B and float32 C, and put A and B on the device as raw 16-bit patterns,
zero-padded to multiples of 8 columns (16-byte rows, as cp.async and the TMA need)."""
import numpy as np

FORMATS = ("fp16", "bf16")
FP8 = "e4m3"                  # the Hopper ladder's FP8 rung only
ROW_ELEMS = 8                 # 16 bytes of 16-bit values


def round_up(n, m):
    return -(-n // m) * m


def input_format(x, name, bits_as=None, fp8=False):
    """"fp16" or "bf16" from x's dtype (uint16 bit patterns count as ``bits_as``, since CuPy has
    no bfloat16), and with ``fp8`` also "e4m3" (ml_dtypes.float8_e4m3fn, or uint8 bytes with
    ``bits_as="e4m3"``); a TypeError that says how to convert otherwise."""
    dt = np.dtype(x.dtype)
    if dt == np.float16:
        return "fp16"
    if str(dt) == "bfloat16":
        return "bf16"
    if dt == np.uint16 and bits_as in FORMATS:
        return bits_as
    if fp8 and (str(dt) == "float8_e4m3fn" or (dt == np.uint8 and bits_as == FP8)):
        return FP8
    also = " (or FP8 E4M3: ml_dtypes.float8_e4m3fn)" if fp8 else ""
    raise TypeError(f"{name} has dtype {dt}; the Tensor Core kernels take FP16 or BF16 inputs"
                    f"{also}: convert with {name}.astype(np.float16) (or ml_dtypes.bfloat16) and "
                    f"decide knowingly what that rounding costs")


def check(A, B, C=None, beta=0.0, bits_as=None, fp8=False):
    """(format, M, N, K) of ``C = alpha A B + beta C``, or a TypeError/ValueError naming what is
    wrong: A (M x K) and B (K x N) of one 16-bit format (or, with ``fp8``, both E4M3), C (M x N)
    when beta is not 0."""
    fmt = input_format(A, "A", bits_as, fp8)
    if input_format(B, "B", bits_as, fp8) != fmt:
        raise TypeError(f"A and B must have the same format, got A {A.dtype} and B {B.dtype}")
    if A.ndim != 2 or B.ndim != 2 or A.shape[1] != B.shape[0]:
        raise ValueError(f"expected A (M x K) and B (K x N), got shapes {tuple(A.shape)} and "
                         f"{tuple(B.shape)}")
    (M, K), N = A.shape, B.shape[1]
    if C is not None and tuple(C.shape) != (M, N):
        raise ValueError(f"C must have shape ({M}, {N}), got {tuple(C.shape)}")
    if C is None and beta != 0:
        raise ValueError(f"beta={beta} scales C_in, but no C was given: pass C, or beta=0")
    return fmt, M, N, K


def device_bits(cupy, x, shape, bits_type=np.uint16):
    """x as a C-contiguous device array of its raw bit patterns (uint16; uint8 for FP8),
    zero-padded to ``shape``; copied also when its start is not 16-byte aligned."""
    if isinstance(x, np.ndarray):
        bits = cupy.asarray(np.ascontiguousarray(x).view(bits_type))
    else:
        bits = cupy.ascontiguousarray(x).view(bits_type)
    if tuple(bits.shape) == tuple(shape) and bits.data.ptr % 16 == 0:
        return bits
    padded = cupy.zeros(shape, dtype=bits_type)
    padded[:bits.shape[0], :bits.shape[1]] = bits
    return padded


def output(cupy, M, N, C):
    """(C_in, C_out): C_out poisoned with NaN (a missed store shows), C_in the caller's C as
    float32 on the device, or C_out itself when there is none (then beta is 0 and it is unread)."""
    out = cupy.full((M, N), cupy.nan, dtype=cupy.float32)
    c_in = out if C is None else cupy.ascontiguousarray(cupy.asarray(C, dtype=cupy.float32))
    return c_in, out
