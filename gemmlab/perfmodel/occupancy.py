"""How many blocks of a kernel fit on one streaming multiprocessor (SM) at once; what an SM holds
is in ``perfmodel.hardware`` (one :class:`~gemmlab.perfmodel.hardware.SMResources` per
architecture; Hopper's is the default, the GPU in hand's is ``gl.device.spec().sm``).

A kernel's registers per thread, threads per block and shared memory per block decide how many of
its blocks an SM runs at once, hence how many warps the scheduler can switch between to hide
latency. Lessons 08 and 11 use this to explain when double buffering pays: with few resident
warps, nothing else hides a warp's wait, so the kernel must overlap within the warp.
"""
from .hardware import HOPPER, MAX_REGISTERS_PER_THREAD, MAX_THREADS_PER_BLOCK


def blocks_per_sm(regs_per_thread, threads, smem_bytes, sm=HOPPER):
    """(blocks, limit): how many blocks fit on one SM at once, and which resource binds
    ("registers", "shared memory", "threads" or "blocks"). Each resident block takes its own
    shared memory plus the driver's reservation out of the SM's total."""
    if min(regs_per_thread, threads) < 1 or smem_bytes < 0:
        raise ValueError(f"need registers >= 1, threads >= 1, shared bytes >= 0; got "
                         f"{regs_per_thread}, {threads}, {smem_bytes}")
    if threads > MAX_THREADS_PER_BLOCK:
        raise ValueError(f"a block of {threads} threads cannot be launched: a CUDA block has at "
                         f"most {MAX_THREADS_PER_BLOCK} threads")
    if regs_per_thread > MAX_REGISTERS_PER_THREAD:
        raise ValueError(f"{regs_per_thread} registers per thread is not possible: a thread has "
                         f"at most {MAX_REGISTERS_PER_THREAD} (the compiler spills the rest to "
                         f"local memory)")
    if smem_bytes > sm.max_shared_per_block:
        raise ValueError(f"a block of {smem_bytes} bytes of shared memory cannot launch: "
                         f"{sm.name} allows at most {sm.max_shared_per_block} per block")
    warps = -(-threads // 32)
    per_warp = -(-regs_per_thread * 32 // sm.register_unit) * sm.register_unit
    per_block_shared = smem_bytes + sm.reserved_shared_per_block
    limits = {
        "registers": sm.registers // (per_warp * warps),
        "threads": sm.max_threads // (warps * 32),
        "blocks": sm.max_blocks,
    }
    if per_block_shared:             # a Turing block without shared memory takes none of it
        limits["shared memory"] = sm.shared_bytes // per_block_shared
    limit = min(limits, key=limits.get)
    return limits[limit], limit
