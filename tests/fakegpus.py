"""The GPUs of the course's hardware table as their CUDA driver would describe them, for tests that
run every live helper on a machine without a GPU (``gemmlab.gpuspec.FakeAttributes``).

The values are written out here, not taken from ``perfmodel.datasheets``, so that a test comparing a
helper's answer with the datasheet compares two independent records. Where a real ``deviceQuery``
of that GPU was found (T4, A100 40GB, RTX 3090) or recorded here (H200, benchmarks/
gpu_occupancy.json), its values are used; elsewhere the per-architecture limits (NVIDIA's table per
compute capability) and the product's SM count and boost clock. L2 of the B200 is not known: 0.
"""
from gemmlab import gpuspec

KIB, MIB = 1024, 1 << 20


def _limits(cc):
    """Per-SM limits by compute capability: shared per SM (KiB), threads per SM, blocks per SM."""
    shared, threads, blocks = {(7, 5): (64, 1024, 16), (8, 0): (164, 2048, 32),
                               (8, 6): (100, 1536, 16), (8, 9): (100, 1536, 24),
                               (9, 0): (228, 2048, 32), (10, 0): (228, 2048, 32),
                               (12, 0): (100, 1536, 24)}[cc]
    reserved = 0 if cc < (8, 0) else KIB
    return dict(shared_per_sm=shared * KIB, shared_per_block_optin=shared * KIB - reserved,
                reserved_shared_per_block=reserved, max_threads_per_sm=threads,
                max_blocks_per_sm=blocks)


def _gpu(name, memory, cc, sms, clock_mhz, l2_mib):
    return gpuspec.FakeAttributes(
        name, memory, cc_major=cc[0], cc_minor=cc[1], sms=sms, clock_khz=clock_mhz * 1000,
        l2_bytes=int(l2_mib * MIB), shared_per_block=48 * KIB, registers_per_sm=65536,
        registers_per_block=65536, max_threads_per_block=1024, warp_size=32, **_limits(cc))


# table row -> the driver's description of that product
FAKE_GPUS = {
    "T4": _gpu("Tesla T4", 15835660288, (7, 5), 40, 1590, 4),
    "L4": _gpu("NVIDIA L4", 23_580_639_232, (8, 9), 58, 2040, 48),
    "A10": _gpu("NVIDIA A10", 23_835_181_056, (8, 6), 72, 1695, 6),
    "A100 40GB": _gpu("NVIDIA A100-SXM4-40GB", 42405855232, (8, 0), 108, 1410, 40),
    "A100 SXM": _gpu("NVIDIA A100-SXM4-80GB", 85_031_714_816, (8, 0), 108, 1410, 40),
    "RTX 3090": _gpu("NVIDIA GeForce RTX 3090", 25286672384, (8, 6), 82, 1695, 6),
    "RTX 4090": _gpu("NVIDIA GeForce RTX 4090", 25_393_692_672, (8, 9), 128, 2520, 72),
    "RTX 5090": _gpu("NVIDIA GeForce RTX 5090", 34_190_917_632, (12, 0), 170, 2407, 96),
    "H100 PCIe": _gpu("NVIDIA H100 PCIe", 85_520_809_984, (9, 0), 114, 1755, 50),
    "H100 SXM": _gpu("NVIDIA H100 80GB HBM3", 85_520_809_984, (9, 0), 132, 1980, 50),
    "H200 SXM": _gpu("NVIDIA H200", 150_754_820_096, (9, 0), 132, 1980, 50),
    "B200": _gpu("NVIDIA B200", 191_503_302_656, (10, 0), 148, 1980, 0),
}


def spec(row):
    """The :class:`gemmlab.gpuspec.GPUSpec` of the table row ``row`` ("T4", "H200 SXM"...)."""
    return gpuspec.read(FAKE_GPUS[row])


def laptop(memory_gb):
    """A small laptop GPU (an RTX 3050 Laptop-like sm_86 part) with ``memory_gb`` GB."""
    return gpuspec.read(_gpu("NVIDIA GeForce RTX 3050 Laptop GPU", int(memory_gb * 1e9), (8, 6),
                             16, 1500, 2))
