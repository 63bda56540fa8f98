"""128-bit global loads for numba.cuda, which has no way to read four float32 at once from a float32
array: ``load4`` asks LLVM for one ``<4 x float>`` load (PTX ``ld.global.v4.f32``), and
``aligned16`` says whether an array's rows allow it. On the simulator both are plain Python.

``load4(X, r, c)`` needs ``&X[r, c]`` to be a multiple of 16 bytes: true when the array starts on a
16-byte boundary, its rows are a multiple of 4 floats long and ``c`` is a multiple of 4, which
is what ``aligned16(X)`` checks (the caller takes care of ``c``). A misaligned 128-bit load is a
fault on the GPU, never a wrong number, and the kernels only take this path after the check.
"""
from numba import uint64

from .. import device

cuda = device.cuda()   # a module global: the simulator swaps it for its fake module


def _load4_sim(X, r, c):
    return X[r, c], X[r, c + 1], X[r, c + 2], X[r, c + 3]


def _aligned16_sim(X):
    return X.shape[1] % 4 == 0      # NumPy arrays of the simulator: the row length is what varies


def _gpu_intrinsics():
    from llvmlite import ir
    from numba import types
    from numba.cuda import cgutils
    from numba.cuda.extending import intrinsic

    @intrinsic
    def load4(typingctx, X, r, c):
        """(X[r, c], X[r, c+1], X[r, c+2], X[r, c+3]) from one aligned 128-bit load."""
        sig = types.UniTuple(types.float32, 4)(X, r, c)

        def codegen(context, builder, sig, args):
            array_type = sig.args[0]
            array = context.make_array(array_type)(context, builder, value=args[0])
            index = [context.cast(builder, v, t, types.intp)
                     for v, t in zip(args[1:], sig.args[1:], strict=True)]
            ptr = cgutils.get_item_pointer(context, builder, array_type, array, index,
                                           wraparound=False)
            vector = builder.load(builder.bitcast(ptr, ir.VectorType(ir.FloatType(), 4).as_pointer()),
                                  align=16)
            values = [builder.extract_element(vector, ir.IntType(32)(i)) for i in range(4)]
            return context.make_tuple(builder, sig.return_type, values)

        return sig, codegen

    @intrinsic
    def data_address(typingctx, X):
        """The address of X's first element, as an integer."""
        def codegen(context, builder, sig, args):
            array = context.make_array(sig.args[0])(context, builder, value=args[0])
            return builder.ptrtoint(array.data, ir.IntType(64))

        return types.uint64(X), codegen

    @cuda.jit(device=True, forceinline=True)
    def aligned16(X):
        """Whether every X[r, c] with c a multiple of 4 lies on a 16-byte boundary."""
        return X.shape[1] % 4 == 0 and data_address(X) % uint64(16) == uint64(0)

    return load4, aligned16


if device.backend() == "sim":
    load4 = cuda.jit(device=True)(_load4_sim)
    aligned16 = cuda.jit(device=True)(_aligned16_sim)
else:
    load4, aligned16 = _gpu_intrinsics()
