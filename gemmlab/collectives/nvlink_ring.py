"""Our ring all-reduce with the transfer and the addition in one pass: each GPU reads the chunk
that arrives straight from its predecessor's memory over NVLink and adds its own input to it as
it reads (``nvlink_ring.cu``).

Why. Over NCCL's send/recv (``nccl``, ``nccl_graph``) a reduce-scatter step lands the chunk in
memory and a second kernel adds it: on two H200s the transfers alone ran as fast as NCCL's whole
all-reduce, and the separate addition (a read of two halves and a write of one) was the 16% by
which our ring trailed it (``benchmarks/RESULTS.md``). NCCL fuses the addition into its copy; so
does this ring. It is the same algorithm: the same chunks, the same 2(N-1) steps of
``RingPlan.schedule``, the same order of additions, so it gives the step-by-step ring's bits. Only
the message changes: instead of a send and a receive, the receiver loads the data from the
sender's buffer, after the sender has raised a flag saying the chunk is complete.

How the ranks see each other's memory: every rank exports its input, output and flags with CUDA
IPC handles, the ranks swap the handles over NCCL (an all-gather), and each opens its neighbours'
(``cudaIpcOpenMemHandle`` also enables peer access). That needs every rank on one machine, each
GPU able to reach its neighbours' memory (NVLink or PCIe peer to peer): :class:`NvlinkRing` says
so and stops otherwise. NCCL itself is used only to swap the handles and as a barrier.
"""
import ctypes
import functools
import socket
import zlib
from pathlib import Path

import numpy as np

from .. import cudacompile, cudadriver
from .nccl import BackendUnavailable, require_cupy
from .ring_steps import RingPlan, array_module, flat_view, output_like

BLOCKS = 32          # blocks per GPU: each moves 1/BLOCKS of every chunk, waiting only on its twin
THREADS = 512
KERNEL_TYPES = {"float16": "half_bits", "float32": "float", "float64": "double",
                "int32": "int", "int64": "long long"}
_HANDLE_WORDS = 8    # a cudaIpcMemHandle_t is 64 bytes: 8 int64 words
_BUFFERS = ("input", "output", "flags")


def step_table(plan, rank):
    """Rank ``rank``'s steps as rows of (chunk that arrives, 1 if the predecessor holds it in its
    input, 1 if it is added to this rank's input): the kernel's only knowledge of the ring.

    The predecessor sends the chunk this rank receives; it sends from its input at the first
    reduce-scatter step and from its output after (``ring_steps.ring_ops``), and the reduce-scatter adds
    while the all-gather stores."""
    return np.array([(s.recv, int(s.phase == "reduce-scatter" and s.step == 0),
                      int(s.phase == "reduce-scatter")) for s in plan.schedule(rank)],
                    dtype=np.int64).reshape(-1, 3)


def emulate(plan, inputs):
    """The kernel's schedule run in lock step on NumPy arrays (one per rank): each rank reads its
    predecessor's buffers as the kernel does. For the CPU tests of :func:`step_table`."""
    n = plan.n_ranks
    outs = [np.full_like(x, np.nan) if x.dtype.kind == "f" else np.zeros_like(x) for x in inputs]
    tables = [step_table(plan, r) for r in range(n)]
    o = plan.offsets
    for t in range(2 * (n - 1)):
        for r in range(n):
            chunk, from_input, adds = tables[r][t]
            pred = (r - 1) % n
            part = slice(o[chunk], o[chunk + 1])
            arrived = (inputs if from_input else outs)[pred][part]
            outs[r][part] = arrived + inputs[r][part] if adds else arrived
    return outs


SOURCE = Path(__file__).with_name("nvlink_ring.cu")
NAME_EXPRESSIONS = tuple(f"ring_allreduce<{t}>" for t in KERNEL_TYPES.values())


@functools.lru_cache(maxsize=None)
def _module():
    """The ring kernel for every type of :data:`KERNEL_TYPES`, compiled by NVRTC for this GPU
    (``gl.cudacompile``, cached on disk) and loaded once per process: (module, mangled names)."""
    cupy, _ = require_cupy()
    cc = cupy.cuda.Device().compute_capability
    arch = cudacompile.arch_name((int(cc[:-1]), int(cc[-1])))
    path, built = cudacompile.cached_cubin(SOURCE.read_text(encoding="utf-8"), arch, SOURCE.name,
                                           name_expressions=NAME_EXPRESSIONS)
    return cupy.RawModule(path=str(path)), built.lowered


def kernel(dtype):
    """The compiled ring kernel for ``dtype``."""
    module, lowered = _module()
    return module.get_function(lowered[f"ring_allreduce<{KERNEL_TYPES[np.dtype(dtype).name]}>"])


def _allocation_base(ptr):
    """The start of the cudaMalloc allocation holding device address ``ptr``: an IPC handle names
    the allocation, so the peer needs ``ptr``'s offset in it."""
    lib = cudadriver.required()
    base, size = ctypes.c_uint64(), ctypes.c_size_t()
    cudadriver.check(lib.cuMemGetAddressRange_v2(ctypes.byref(base), ctypes.byref(size),
                                                 ctypes.c_uint64(ptr)),
                     f"cuMemGetAddressRange({ptr:#x})", lib)
    return base.value


def _host_id():
    return zlib.crc32(socket.gethostname().encode())


def _record(cupy, arrays):
    """This rank's int64 record: device, host, then per array its IPC handle and offset."""
    words = [cupy.cuda.Device().id, _host_id()]
    for a in arrays:
        base = _allocation_base(a.data.ptr)
        handle = cupy.cuda.runtime.ipcGetMemHandle(base)
        words += np.frombuffer(bytes(handle), dtype=np.int64).tolist() + [a.data.ptr - base]
    return np.array(words, dtype=np.int64)


class NvlinkRing:
    """Rank ``transport.rank``'s ring all-reduce of ``buf`` into ``out`` (allocated when None),
    with its neighbours' buffers mapped in; each call sums every rank's ``buf`` into ``out`` again.

    Every rank builds its NvlinkRing at the same point (the handles are swapped over
    ``transport``) and on buffers that stay alive and in place until :meth:`close`, which every
    rank must also call at the same point. ``blocks`` and ``threads``: the kernel's launch, the
    same on every rank.
    """

    def __init__(self, transport, buf, out=None, blocks=BLOCKS, threads=THREADS):
        self.cupy, _ = require_cupy()
        cupy = self.cupy
        if array_module(buf) is not cupy:
            raise TypeError(f"the NVLink ring runs on CuPy arrays on this rank's GPU; got a "
                            f"{type(buf).__module__}.{type(buf).__name__}")
        if np.dtype(buf.dtype).name not in KERNEL_TYPES:
            raise TypeError(f"the NVLink ring adds {', '.join(KERNEL_TYPES)}; got {buf.dtype}")
        self.transport, self.blocks, self.threads = transport, int(blocks), int(threads)
        self.flat = flat_view(buf)               # a copy only when buf is not contiguous
        self.out = output_like(buf, out)
        self._opened, self._launch, self._closed = {}, None, False
        out_flat = self.out.reshape(-1)
        if (self.flat.data.ptr - out_flat.data.ptr) % 16:
            raise ValueError("the NVLink ring reads in 16-byte vectors: the input and the output "
                             "must start at the same offset modulo 16 bytes (whole CuPy arrays do)")
        n = transport.size
        if n == 1:
            return
        plan = RingPlan.split(n, self.flat.size, self.flat.itemsize)
        self.flags = cupy.zeros(3 * self.blocks, dtype=cupy.uint64)
        pred, succ = self._exchange([self.flat, out_flat, self.flags], transport)
        self._launch = (kernel(buf.dtype), (self.blocks,), (self.threads,), (
            self.flat, out_flat, np.uint64(pred["input"]), np.uint64(pred["output"]),
            cupy.asarray(np.array(plan.offsets, np.int64)),
            cupy.asarray(step_table(plan, transport.rank)), np.int32(2 * (n - 1)), self.flags,
            np.uint64(succ["flags"]), np.uint64(pred["flags"])))

    def _exchange(self, arrays, transport):
        """Swap IPC handles with every rank; the predecessor's and the successor's buffers (name ->
        address in this process)."""
        cupy = self.cupy
        mine = _record(cupy, arrays)
        everyone = cupy.empty(mine.size * transport.size, dtype=cupy.int64)
        cupy.cuda.get_current_stream().synchronize()     # the flags are zero before anyone sees them
        transport.allgather(cupy.asarray(mine), everyone)
        records = everyone.get().reshape(transport.size, -1)
        rank, n = transport.rank, transport.size
        return [self._open(records[(rank + d) % n], (rank + d) % n) for d in (-1, 1)]

    def _open(self, record, rank):
        cupy = self.cupy
        device, host = int(record[0]), int(record[1])
        if host != _host_id():
            raise BackendUnavailable(f"rank {rank} runs on another machine: the NVLink ring needs "
                                     f"every rank on one host; use the 'ring' or 'nccl' all-reduce")
        mine = cupy.cuda.Device().id
        if not cupy.cuda.runtime.deviceCanAccessPeer(mine, device):
            raise BackendUnavailable(f"GPU {mine} cannot read GPU {device}'s memory (no NVLink or "
                                     f"peer-to-peer path): use the 'ring' or 'nccl' all-reduce")
        addresses = {}
        for i, name in enumerate(_BUFFERS):
            words = record[2 + i * (_HANDLE_WORDS + 1):2 + (i + 1) * (_HANDLE_WORDS + 1)]
            handle = words[:_HANDLE_WORDS].tobytes()
            if handle not in self._opened:       # an allocation is opened once per process
                self._opened[handle] = cupy.cuda.runtime.ipcOpenMemHandle(handle)
            addresses[name] = self._opened[handle] + int(words[_HANDLE_WORDS])
        return addresses

    def __call__(self):
        if self._closed:
            raise RuntimeError("this NvlinkRing was closed: its neighbours' buffers are unmapped")
        if self._launch is None:
            self.out.reshape(-1)[...] = self.flat
        else:
            fn, grid, block, args = self._launch
            fn(grid, block, args)
        return self.out

    def close(self):
        """Unmap the neighbours' buffers, once no rank will read another's any more."""
        cupy = self.cupy
        cupy.cuda.get_current_stream().synchronize()
        for address in self._opened.values():
            cupy.cuda.runtime.ipcCloseMemHandle(address)
        self._opened, self._launch, self._closed = {}, None, True
        if self.transport.size > 1:          # nobody frees a buffer a neighbour still maps
            token = cupy.zeros(1, dtype=cupy.int64)
            self.transport.allreduce(token, token)
            cupy.cuda.get_current_stream().synchronize()
