"""The one home of hardware facts: peak figures of three data-centre GPUs (each with its source
and how it was obtained), what one streaming multiprocessor (SM) holds, and the limits one thread
block must respect. Kernels, the bench, the occupancy model and the question bank import them
from here.

Every number a roofline uses should say where it comes from. Vendor datasheets print some Tensor
Core peaks only "with sparsity" (2:4 structured sparsity doubles the printed figure); this table
stores the dense value and marks it as the sparse figure halved, so nobody mistakes it for a
measurement. Values are in SI base units: FLOP/s, bytes/s, bytes (decimal prefixes, as vendors use).
"""
from dataclasses import dataclass

DATASHEET = "datasheet"                       # printed as a dense peak
SPARSE_HALVED = "datasheet sparse figure / 2"  # printed with sparsity; the dense peak is half
MEASURED = "measured"                         # measured on a real device, e.g. in lesson 04

_H200 = "NVIDIA H200 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/h200), SXM column"
_H100 = "NVIDIA H100 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/h100), SXM column"
_HOPPER_WP = "NVIDIA H100 Tensor Core GPU Architecture whitepaper (H100 SXM5: 132 SMs)"
_H200_SMS = "Nsight Compute ('# SMs') on the course's H200, 2026-11-29"
_A100_WP = "NVIDIA A100 Tensor Core GPU Architecture whitepaper (A100: 108 SMs)"
_A100 = ("NVIDIA A100 Tensor Core GPU datasheet "
         "(nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf), 80GB SXM column")
_CUDA_GUIDE = ("CUDA C++ Programming Guide, 'Technical Specifications per Compute Capability' "
               "(compute capability 9.0)")

DTYPES = ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8")


@dataclass(frozen=True)
class Figure:
    """One hardware number: value in SI base units, its unit, where it comes from, and how."""
    value: float
    unit: str
    source: str
    basis: str = DATASHEET

    @property
    def is_measured(self):
        return self.basis == MEASURED


@dataclass(frozen=True)
class Chip:
    """A GPU: dense peak FLOP/s per data type, HBM bandwidth, HBM capacity, number of SMs."""
    name: str
    peaks: dict
    bandwidth: Figure
    capacity: Figure
    sms: Figure

    def peak(self, dtype="fp32"):
        """Dense peak FLOP/s for ``dtype`` (one of :data:`DTYPES`)."""
        if dtype not in DTYPES:
            raise ValueError(f"unknown data type {dtype!r}; expected one of {', '.join(DTYPES)}")
        if dtype not in self.peaks:
            raise ValueError(f"the {self.name} has no {dtype} peak (its hardware has no {dtype} path)")
        return self.peaks[dtype].value

    def ridge_point(self, dtype="fp32"):
        """Intensity (FLOP/B) where the bandwidth roof meets the compute roof: P / B."""
        return self.peak(dtype) / self.bandwidth.value


def _tflops(value, source, basis=DATASHEET):
    return Figure(value * 1e12, "FLOP/s", source, basis)


def _sparse(printed_tflops, source):
    return _tflops(printed_tflops / 2, source, SPARSE_HALVED)


def _hopper_peaks(source):
    # H100 SXM and H200 SXM share the GH100 compute; only their memory differs.
    return {
        "fp64": _tflops(34, source),
        "fp32": _tflops(67, source),
        "tf32": _sparse(989, source),
        "fp16": _sparse(1979, source),
        "bf16": _sparse(1979, source),
        "fp8": _sparse(3958, source),
    }


HARDWARE = {
    "H200 SXM": Chip(
        "H200 SXM", _hopper_peaks(_H200),
        bandwidth=Figure(4.8e12, "B/s", _H200), capacity=Figure(141e9, "B", _H200),
        sms=Figure(132, "SMs", _H200_SMS, MEASURED)),
    "H100 SXM": Chip(
        "H100 SXM", _hopper_peaks(_H100),
        bandwidth=Figure(3.35e12, "B/s", _H100), capacity=Figure(80e9, "B", _H100),
        sms=Figure(132, "SMs", _HOPPER_WP)),
    "A100 SXM": Chip(
        "A100 SXM", {
            "fp64": _tflops(9.7, _A100),
            "fp32": _tflops(19.5, _A100),
            "tf32": _tflops(156, _A100),
            "fp16": _tflops(312, _A100),
            "bf16": _tflops(312, _A100),
        },
        bandwidth=Figure(2.039e12, "B/s", _A100), capacity=Figure(80e9, "B", _A100),
        sms=Figure(108, "SMs", _A100_WP)),
}


def chip(name):
    """The :class:`Chip` called ``name`` ("H200 SXM", "H100", "a100"...: case and " SXM" optional)."""
    wanted = str(name).strip().lower().removesuffix(" sxm")
    for key, value in HARDWARE.items():
        if key.lower().removesuffix(" sxm") == wanted:
            return value
    raise ValueError(f"unknown GPU {name!r}; the table has {', '.join(HARDWARE)}")


def table(dtypes=DTYPES):
    """The table as rows (dicts) for display: peaks in TFLOP/s, bandwidth in TB/s, capacity in GB.
    A peak that is a halved sparse figure is marked with '*'."""
    rows = []
    for c in HARDWARE.values():
        row = {"GPU": c.name}
        for d in dtypes:
            fig = c.peaks.get(d)
            row[f"{d} TFLOP/s"] = "-" if fig is None else (
                f"{fig.value / 1e12:g}" + ("*" if fig.basis == SPARSE_HALVED else ""))
        row["HBM TB/s"] = f"{c.bandwidth.value / 1e12:g}"
        row["HBM GB"] = f"{c.capacity.value / 1e9:g}"
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


# What an SM's shared memory holds is decided here and nowhere else (the CUDA guide, compute
# capability 9.0): 228 KiB per SM, of which one block may use at most 227 KiB, and the driver
# reserves 1 KiB of the SM's shared memory for every resident block. So a block of 227 KiB fits
# exactly once (227 + 1 = 228), two of 113 KiB fit (2 x 114 = 228). Compared with
# cudaOccupancyMaxActiveBlocksPerMultiprocessor by benchmarks/gpu_occupancy.py.
HOPPER = SMResources(
    name="Hopper (sm_90: H100, H200)", registers=65536, max_threads=2048, max_blocks=32,
    shared_bytes=228 * 1024, max_shared_per_block=227 * 1024, reserved_shared_per_block=1024,
    register_unit=256, shared_bytes_per_clock=128, fp32_lanes=fp32_lanes_per_sm(9, 0),
    source=_CUDA_GUIDE)

# ---- the path a model file takes to the arithmetic (lesson 00) ----
# SSD -> host memory -> PCIe (host <-> GPU) or NVLink (GPU <-> GPU) -> HBM -> registers. Each hop
# moves bytes at its own rate; none of the link figures is a memory bandwidth. Interconnect
# datasheets print both directions added together; the table keeps one direction.

BOTH_WAYS_HALVED = "datasheet figure for both directions / 2"

_SSD = ("Samsung 990 PRO NVMe SSD datasheet (PCIe 4.0 x4): sequential read up to 7,450 MB/s")
_DDR5 = ("JEDEC DDR5 SDRAM standard (JESD79-5), speed grade DDR5-4800: 4800 MT/s x 8 bytes per "
         "64-bit channel = 38.4 GB/s per channel")
_H200_LINKS = _H200 + ": 'PCIe Gen5: 128GB/s', 'NVIDIA NVLink: 900GB/s' (both directions)"
_L40S = "NVIDIA L40S GPU datasheet (nvidia.com/en-us/data-center/l40s): 48 GB GDDR6, 864 GB/s"
_A100_TDP = _A100 + ": max TDP 400 W"
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
