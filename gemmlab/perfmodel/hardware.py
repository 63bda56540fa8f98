"""The one home of hardware facts: the datasheet figures of the GPUs a student may have (rows in
``perfmodel.datasheets``, each with its source and how it was obtained), what one streaming
multiprocessor (SM) of each architecture holds, and the limits one thread block must respect.
Kernels, the bench, the occupancy model, the question bank and ``gl.device`` (the GPU in hand)
import them from here.

Every number a roofline uses should say where it comes from. Vendor datasheets print some Tensor
Core peaks only "with sparsity" (2:4 structured sparsity doubles the printed figure); the table
stores the dense value and marks it as the sparse figure halved, so nobody mistakes it for a
measurement. Values are in SI base units: FLOP/s, bytes/s, bytes (decimal prefixes, as vendors use,
except cache sizes, which vendors give in binary units).
"""
import re
from dataclasses import dataclass

from .datasheets import DERIVED, DTYPES, HARDWARE, SPARSE_HALVED, Figure, Source

_CCCL = Source("NVIDIA CCCL, libcudacxx/include/cuda/__device/arch_traits.h: the per-architecture "
               "limits of the CUDA C++ Programming Guide's 'Technical Specifications per Compute "
               "Capability' as code",
               "https://github.com/NVIDIA/cccl/blob/004ad1986064aaa82892ed00d0dbda88b90fa6e6/"
               "libcudacxx/include/cuda/__device/arch_traits.h", "2026 (commit 004ad19)")
_CUDA_GUIDE = str(_CCCL)


def chip(name):
    """The :class:`Chip` called ``name`` ("H200 SXM", "H100", "a100", "T4"...: case and " SXM"
    optional)."""
    wanted = str(name).strip().lower().removesuffix(" sxm")
    for key, value in HARDWARE.items():
        if key.lower().removesuffix(" sxm") == wanted:
            return value
    raise ValueError(f"unknown GPU {name!r}; the table has {', '.join(HARDWARE)}")


def chip_for(device_name):
    """The :class:`Chip` whose datasheet describes the GPU the driver calls ``device_name``
    ("Tesla T4", "NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-40GB"...), or None when the table has
    no row for that exact product (an "RTX 3090 Ti" is not an "RTX 3090", an "A10G" not an "A10")."""
    name = str(device_name).lower()
    found = [c for c in HARDWARE.values() if any(_names(n, name) for n in c.device_names)]
    return found[0] if len(found) == 1 else None


def _names(known, name):
    """Whether the driver's ``name`` is the product ``known``, not a longer one that starts alike."""
    return re.search(re.escape(known) + r"(?![0-9a-z])(?!\s+(ti|super|d)\b)", name) is not None


def table(dtypes=DTYPES):
    """The table as rows (dicts) for display: peaks in TFLOP/s, bandwidth in TB/s, capacity in GB.
    Bandwidth and capacity are the device memory's
    (HBM or GDDR). A peak that is a halved sparse figure is marked with '*', one derived from other figures with
    '~'; '-' means no such path in the hardware, '?' a figure the sources do not confirm."""
    rows = []
    for c in HARDWARE.values():
        row = {"GPU": c.name}
        for d in dtypes:
            fig = c.peaks.get(d, "-")
            row[f"{d} TFLOP/s"] = fig if isinstance(fig, str) else "?" if fig is None else (
                f"{fig.value / 1e12:g}" + {SPARSE_HALVED: "*", DERIVED: "~"}.get(fig.basis, ""))
        row["memory"] = c.memory
        row["TB/s"] = f"{c.bandwidth.value / 1e12:g}"
        row["GB"] = f"{c.capacity.value / 1e9:g}"
        rows.append(row)
    return rows


# ------------------------------------------------------------------ one thread block, one SM

MAX_THREADS_PER_BLOCK = 1024           # every compute capability since 2.0
MAX_REGISTERS_PER_THREAD = 255         # every compute capability since 3.5
MAX_STATIC_SHARED_BYTES = 48 * 1024    # per block; numba-cuda allocates shared arrays statically


def fp32_lanes_per_sm(major, minor=0):
    """FP32 FMA lanes per SM of compute capability ``major.minor`` (the CUDA guide's "32-bit
    floating-point add, multiply, multiply-add" results per clock per SM): 64 on Volta, Turing
    and the A100 (8.0), 128 on 8.6/8.7/8.9 and on Hopper and Blackwell."""
    if major == 8 and minor in (6, 7, 9):
        return 128
    return {7: 64, 8: 64, 9: 128, 10: 128, 12: 128}.get(major, 128)


@dataclass(frozen=True)
class SMResources:
    """Per-SM limits of one architecture (from ``source``)."""
    name: str
    registers: int            # 32-bit registers per SM
    max_threads: int
    max_blocks: int
    shared_bytes: int         # shared memory per SM (its largest carve-out), reservations included
    max_shared_per_block: int        # the most one block may use (dynamic opt-in above 48 KiB)
    reserved_shared_per_block: int   # the driver's own shared memory per resident block
    register_unit: int        # registers are allocated per warp in multiples of this
    shared_bytes_per_clock: int      # 32 banks x 4 bytes
    fp32_lanes: int
    source: str


def _arch(name, cc, shared_kib, max_threads, max_blocks):
    major, minor = cc
    reserved = 1024 if major >= 8 else 0       # the driver's per-block reservation, from sm_80 on
    return SMResources(
        name=name, registers=65536, max_threads=max_threads, max_blocks=max_blocks,
        shared_bytes=shared_kib * 1024, max_shared_per_block=shared_kib * 1024 - reserved,
        reserved_shared_per_block=reserved, register_unit=256, shared_bytes_per_clock=128,
        fp32_lanes=fp32_lanes_per_sm(major, minor), source=_CUDA_GUIDE)


# What an SM of each architecture holds (shared memory of its largest carve-out, resident threads
# and blocks), from NVIDIA's own table of limits per compute capability. On Hopper: 228 KiB per SM,
# of which one block may use at most 227 KiB, and the driver reserves 1 KiB of the SM's shared
# memory for every resident block, so a block of 227 KiB fits exactly once (227 + 1 = 228) and two
# of 113 KiB fit (2 x 114 = 228). Compared with cudaOccupancyMaxActiveBlocksPerMultiprocessor by
# benchmarks/gpu_occupancy.py; the GPU in hand reports its own (``gl.device.spec().sm``).
ARCHITECTURES = {
    (7, 5): _arch("Turing (sm_75: T4, RTX 20)", (7, 5), 64, 1024, 16),
    (8, 0): _arch("Ampere (sm_80: A100)", (8, 0), 164, 2048, 32),
    (8, 6): _arch("Ampere (sm_86: A10, RTX 30)", (8, 6), 100, 1536, 16),
    (8, 7): _arch("Ampere (sm_87: Jetson Orin)", (8, 7), 164, 1536, 16),
    (8, 9): _arch("Ada (sm_89: L4, RTX 40)", (8, 9), 100, 1536, 24),
    (9, 0): _arch("Hopper (sm_90: H100, H200)", (9, 0), 228, 2048, 32),
    (10, 0): _arch("Blackwell (sm_100: B200)", (10, 0), 228, 2048, 32),
    (10, 3): _arch("Blackwell (sm_103: B300)", (10, 3), 228, 2048, 32),
    (12, 0): _arch("Blackwell (sm_120: RTX 50)", (12, 0), 100, 1536, 24),
    (12, 1): _arch("Blackwell (sm_121: DGX Spark)", (12, 1), 100, 1536, 24),
}
HOPPER = ARCHITECTURES[(9, 0)]


def sm_resources(cc):
    """The :class:`SMResources` of compute capability ``cc`` ((9, 0), "9.0" or 9.0)."""
    major, minor = parse_cc(cc)
    try:
        return ARCHITECTURES[major, minor]
    except KeyError:
        known = ", ".join(f"{a}.{b}" for a, b in ARCHITECTURES)
        raise ValueError(f"compute capability {major}.{minor} is not in the course's table ({known}); "
                         f"on that GPU, gl.device.spec().sm reads the limits from the driver") from None


def parse_cc(cc):
    """(major, minor) of a compute capability given as a pair, "8.6" or 8.6."""
    if isinstance(cc, (tuple, list)) and len(cc) == 2:
        return int(cc[0]), int(cc[1])
    major, _, minor = str(cc).partition(".")
    if not (major.isdigit() and minor.isdigit()):
        raise ValueError(f"expected a compute capability like (8, 6) or '8.6', got {cc!r}")
    return int(major), int(minor)


# ---- the path a model file takes to the arithmetic (lesson 00) ----
# SSD -> host memory -> PCIe (host <-> GPU) or NVLink (GPU <-> GPU) -> HBM -> registers. Each hop
# moves bytes at its own rate; none of the link figures is a memory bandwidth. Interconnect
# datasheets print both directions added together; the table keeps one direction.

BOTH_WAYS_HALVED = "datasheet figure for both directions / 2"

_SSD = ("Samsung 990 PRO NVMe SSD datasheet (PCIe 4.0 x4): sequential read up to 7,450 MB/s")
_DDR5 = ("JEDEC DDR5 SDRAM standard (JESD79-5), speed grade DDR5-4800: 4800 MT/s x 8 bytes per "
         "64-bit channel = 38.4 GB/s per channel")
_H200 = str(HARDWARE["H200 SXM"].source)
_H200_LINKS = _H200 + ": 'PCIe Gen5: 128GB/s', 'NVIDIA NVLink: 900GB/s' (both directions)"
_L40S = "NVIDIA L40S GPU datasheet (nvidia.com/en-us/data-center/l40s): 48 GB GDDR6, 864 GB/s"
_A100_TDP = str(HARDWARE["A100 SXM"].source) + ": max TDP 400 W"
_H200_TDP = _H200 + ": max TDP up to 700 W (configurable)"


@dataclass(frozen=True)
class Link:
    """One hop of the path from storage to the arithmetic, and the rate it moves bytes at."""
    name: str
    bandwidth: Figure


MEMORY_PATH = (
    Link("NVMe SSD -> host memory", Figure(7.45e9, "B/s", _SSD)),
    Link("host memory, one DDR5-4800 channel", Figure(38.4e9, "B/s", _DDR5)),
    Link("PCIe 5.0 x16, host <-> H200 (one way)", Figure(64e9, "B/s", _H200_LINKS, BOTH_WAYS_HALVED)),
    Link("NVLink, H200 <-> H200 (one way)", Figure(450e9, "B/s", _H200_LINKS, BOTH_WAYS_HALVED)),
    Link("HBM3e <-> H200 chip", HARDWARE["H200 SXM"].bandwidth),
)

# Device memory comes in kinds: HBM is the one of high-end AI GPUs, not of every GPU.
DEVICE_MEMORY = {
    "H200 SXM": ("HBM3e", HARDWARE["H200 SXM"].bandwidth),
    "H100 SXM": ("HBM3", HARDWARE["H100 SXM"].bandwidth),
    "A100 SXM": ("HBM2e", HARDWARE["A100 SXM"].bandwidth),
    "L40S": ("GDDR6", Figure(864e9, "B/s", _L40S)),
}

# Board power (maximum TDP): what a megawatt of capacity buys depends on the chip.
POWER = {
    "H200 SXM": Figure(700.0, "W", _H200_TDP),
    "A100 SXM": Figure(400.0, "W", _A100_TDP),
}


def memory_path_table(nbytes):
    """Rows (dicts) for display: each hop of :data:`MEMORY_PATH`, its GB/s, how its figure was
    obtained, and the seconds ``nbytes`` would take through that hop alone."""
    if not nbytes > 0:
        raise ValueError(f"nbytes must be a positive number of bytes, got {nbytes!r}")
    return [{"link": link.name, "GB/s": link.bandwidth.value / 1e9, "basis": link.bandwidth.basis,
             "seconds": nbytes / link.bandwidth.value} for link in MEMORY_PATH]
