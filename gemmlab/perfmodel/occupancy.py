"""What one streaming multiprocessor (SM) holds, and how many blocks of a kernel fit on it.

A kernel's registers per thread, threads per block and shared memory per block decide how many of
its blocks an SM runs at once, hence how many warps the scheduler can switch between to hide
latency. Lessons 08 and 11 use this to explain when double buffering pays: with few resident
warps, nothing else hides a warp's wait, so the kernel must overlap within the warp.
"""
from dataclasses import dataclass

_CUDA_GUIDE = ("CUDA C++ Programming Guide, 'Technical Specifications per Compute Capability' "
               "(compute capability 9.0)")


@dataclass(frozen=True)
class SMResources:
    """Per-SM limits of one architecture (from ``source``)."""
    name: str
    registers: int            # 32-bit registers per SM
    max_threads: int
    max_blocks: int
    shared_bytes: int         # shared memory per SM that blocks can use
    reserved_shared_per_block: int   # the driver's own shared memory per block
    register_unit: int        # registers are allocated per warp in multiples of this
    shared_bytes_per_clock: int      # 32 banks x 4 bytes
    fp32_lanes: int
    source: str


HOPPER = SMResources(
    name="Hopper (sm_90: H100, H200)", registers=65536, max_threads=2048, max_blocks=32,
    shared_bytes=227 * 1024, reserved_shared_per_block=1024, register_unit=256,
    shared_bytes_per_clock=128, fp32_lanes=128, source=_CUDA_GUIDE)


def blocks_per_sm(regs_per_thread, threads, smem_bytes, sm=HOPPER):
    """(blocks, limit): how many blocks fit on one SM at once, and which resource binds
    ("registers", "shared memory", "threads" or "blocks")."""
    if min(regs_per_thread, threads) < 1 or smem_bytes < 0:
        raise ValueError(f"need registers >= 1, threads >= 1, shared bytes >= 0; got "
                         f"{regs_per_thread}, {threads}, {smem_bytes}")
    warps = -(-threads // 32)
    per_warp = -(-regs_per_thread * 32 // sm.register_unit) * sm.register_unit
    limits = {
        "registers": sm.registers // (per_warp * warps),
        "shared memory": sm.shared_bytes // (smem_bytes + sm.reserved_shared_per_block),
        "threads": sm.max_threads // (warps * 32),
        "blocks": sm.max_blocks,
    }
    limit = min(limits, key=limits.get)
    return limits[limit], limit
