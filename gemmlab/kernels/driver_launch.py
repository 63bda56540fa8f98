"""``gl.gemm`` on a GPU, launched through the CUDA driver from a parameter block made once.

numba's launch of a compiled kernel types every argument again and rebuilds its parameter list on
each call (about 70 us of host time a launch on the H100 machine, 219 us for the whole ``gl.gemm``
call: benchmarks/RESULTS.md). ``gl.gemm``'s arguments always have the same types: four
C-contiguous float32 matrices and two float32 scalars. So the parameters of one problem shape are
laid out once, as numba lays them out, and a call writes only the four data pointers and the two
scalars before ``cuLaunchKernel``.

numba passes a 2-D array as nine kernel parameters of 8 bytes each (``_prepare_args`` in its
dispatcher): meminfo, parent, the element count, the item size, the data pointer, the two extents
and the two strides in bytes. The kernels take (A, B, C_in, C_out, alpha, beta).
"""
import ctypes
import functools
import threading

from .. import cudadriver, device

FLOAT32_BYTES = 4
_ARRAY_WORDS = 9        # meminfo, parent, nitems, itemsize, data, rows, cols, row and col strides
_DATA_WORD = 4          # where the data pointer sits among an array's words
ARRAYS = 4              # A, B, C_in, C_out


def array_words(rows, cols):
    """numba's parameters for a C-contiguous rows x cols float32 array, the data pointer left 0."""
    return [0, 0, rows * cols, FLOAT32_BYTES, 0, rows, cols, cols * FLOAT32_BYTES, FLOAT32_BYTES]


class ParamBlock:
    """The kernel parameters of one (M, N, K): every word fixed but the data pointers and the
    scalars, and the array of their addresses that ``cuLaunchKernel`` reads. The driver copies
    the values at launch, so one block serves every call; a lock keeps two threads from filling
    it at once."""

    def __init__(self, M, N, K):
        shapes = ((M, K), (K, N), (M, N), (M, N))
        words = [w for shape in shapes for w in array_words(*shape)]
        self.words = (ctypes.c_int64 * len(words))(*words)
        self.scalars = (ctypes.c_float * 2)()
        base, scalars = ctypes.addressof(self.words), ctypes.addressof(self.scalars)
        addresses = [base + 8 * i for i in range(len(words))] + [scalars, scalars + FLOAT32_BYTES]
        self.params = (ctypes.c_void_p * len(addresses))(*addresses)
        self.data_words = tuple(i * _ARRAY_WORDS + _DATA_WORD for i in range(ARRAYS))
        self.lock = threading.Lock()

    def fill(self, pointers, alpha, beta):
        """Write the four data pointers (A, B, C_in, C_out) and alpha, beta; return the
        parameter array for the launch."""
        for word, pointer in zip(self.data_words, pointers, strict=True):
            self.words[word] = pointer
        self.scalars[0] = alpha
        self.scalars[1] = beta
        return self.params


def cufunction(dispatcher):
    """The CUfunction handle (an int) of a rung's kernel, compiled for gemmlab's one signature.
    The kernels are compiled eagerly for that signature, so it is the only overload; the handle is
    the one numba's own launch and ``get_regs_per_thread`` use."""
    compiled = next(iter(dispatcher.overloads.values()))
    handle = compiled._codelibrary.get_cufunc().handle
    return int(getattr(handle, "value", handle))


class DriverLaunch:
    """One rung's kernel for one (M, N, K) with its grid and block, launched by the driver."""

    def __init__(self, dispatcher, grid, block, M, N, K):
        self.function = cufunction(dispatcher)
        self.grid = tuple(grid) + (1,) * (3 - len(grid))
        self.block = tuple(block) + (1,) * (3 - len(block))
        self.params = ParamBlock(M, N, K)
        self.lib = _launcher()

    def __call__(self, pointers, alpha, beta, stream=0):
        """Launch on ``stream`` (0: the legacy default stream, numba's and CuPy's default)."""
        with self.params.lock:
            params = self.params.fill(pointers, alpha, beta)
            result = self._launch(params, stream)
            if result == _INVALID_CONTEXT:           # a thread where no one made the GPU current
                device.cuda().current_context()      # numba makes its (the primary) context current
                result = self._launch(params, stream)
        if result != 0:
            cudadriver.check(result, "cuLaunchKernel")

    def _launch(self, params, stream):
        return self.lib.cuLaunchKernel(self.function, *self.grid, *self.block, 0, stream,
                                       params, None)


_INVALID_CONTEXT = 201          # CUDA_ERROR_INVALID_CONTEXT


@functools.lru_cache(maxsize=1)
def _launcher():
    """A handle of its own on the driver library, with cuLaunchKernel's argument types declared
    (pointers as c_void_p, so that ctypes converts nothing per call); the shared handle of
    ``gl.cudadriver`` keeps its untyped functions for the Hopper launch."""
    lib = ctypes.CDLL(cudadriver.required()._name)
    lib.cuLaunchKernel.argtypes = ([ctypes.c_void_p] + [ctypes.c_uint] * 7
                                   + [ctypes.c_void_p] * 3)
    lib.cuLaunchKernel.restype = ctypes.c_int
    return lib


def device_pointer(x):
    """The device address of a CUDA array: CuPy, a numba device array, or anything with
    ``__cuda_array_interface__``."""
    data = getattr(x, "data", None)
    if hasattr(data, "ptr"):                                  # CuPy
        return data.ptr
    if getattr(x, "__cuda_ndarray__", False):                 # numba
        return x.device_ctypes_pointer.value or 0
    return x.__cuda_array_interface__["data"][0]
