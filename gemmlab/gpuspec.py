"""The GPU in hand as its driver describes it: SMs, clock, shared memory per SM and per block,
registers, resident threads and blocks, L2, memory. From these the course derives the live figures
a lesson prints for *your* GPU: the SM limits that decide blocks per SM, the FP32 peak at the
driver's clock, the datasheet row of the same product (``perfmodel.hardware.chip_for``).

The attributes come from the CUDA driver library through ctypes (``cuDeviceGetAttribute``), so they
are read without numba or CuPy, on either backend. Anything that answers ``name()``,
``total_memory()`` and ``attribute(number)`` is a source: :class:`DriverAttributes` is the real one,
:class:`FakeAttributes` (a dict) lets the tests describe a T4, an RTX 4090 or a B200 on a machine
without any GPU.

    spec = gl.device.spec()            # None without an NVIDIA driver and GPU
    spec.sm, spec.peak_fp32, spec.datasheet
"""
import ctypes
from dataclasses import dataclass

from . import cudadriver
from .perfmodel.hardware import SMResources, chip_for, fp32_lanes_per_sm

# GPUSpec field -> CUdevice_attribute (cuda.h; a test compares them with cuda-bindings' enum)
ATTRIBUTES = {
    "max_threads_per_block": 1,
    "shared_per_block": 8,             # without opting in (48 KiB on every architecture here)
    "warp_size": 10,
    "registers_per_block": 12,
    "clock_khz": 13,                   # the SM clock's maximum: the boost clock
    "sms": 16,
    "l2_bytes": 38,
    "max_threads_per_sm": 39,
    "cc_major": 75,
    "cc_minor": 76,
    "shared_per_sm": 81,
    "registers_per_sm": 82,
    "shared_per_block_optin": 97,      # what one block may use once it opts in
    "max_blocks_per_sm": 106,
    "reserved_shared_per_block": 111,  # the driver's own share per resident block
}
REGISTER_UNIT = 256           # registers are allocated per warp in multiples of this
SHARED_BYTES_PER_CLOCK = 128  # 32 banks of 4 bytes


@dataclass(frozen=True)
class GPUSpec:
    """One GPU, in the driver's units (bytes, kHz, counts)."""
    name: str
    total_memory: int
    cc_major: int
    cc_minor: int
    sms: int
    clock_khz: int
    l2_bytes: int
    shared_per_sm: int
    shared_per_block: int
    shared_per_block_optin: int
    reserved_shared_per_block: int
    registers_per_sm: int
    registers_per_block: int
    max_threads_per_sm: int
    max_threads_per_block: int
    max_blocks_per_sm: int
    warp_size: int

    @property
    def compute_capability(self):
        return self.cc_major, self.cc_minor

    @property
    def sm(self):
        """This GPU's per-SM limits, for ``gl.perfmodel.blocks_per_sm(..., sm=spec.sm)``."""
        return SMResources(
            name=f"{self.name} (sm_{self.cc_major}{self.cc_minor}, from the driver)",
            registers=self.registers_per_sm, max_threads=self.max_threads_per_sm,
            max_blocks=self.max_blocks_per_sm, shared_bytes=self.shared_per_sm,
            max_shared_per_block=self.shared_per_block_optin,
            reserved_shared_per_block=self.reserved_shared_per_block, register_unit=REGISTER_UNIT,
            shared_bytes_per_clock=SHARED_BYTES_PER_CLOCK,
            fp32_lanes=fp32_lanes_per_sm(*self.compute_capability),
            source="the CUDA driver's attributes of this GPU")

    @property
    def peak_fp32(self):
        """FP32 FMA peak in FLOP/s: SMs x FP32 lanes per SM x 2 FLOP per FMA x the driver's clock."""
        return self.sms * fp32_lanes_per_sm(*self.compute_capability) * 2 * self.clock_khz * 1e3

    @property
    def datasheet(self):
        """The row of ``gl.perfmodel.HARDWARE`` for this product, or None if the table has none."""
        return chip_for(self.name)

    def describe(self):
        """Lines for a notebook or ``gemmlab doctor``: the live figures and the datasheet's."""
        kib = 1024
        lines = [f"{self.name}: compute capability {self.cc_major}.{self.cc_minor}, {self.sms} SMs "
                 f"at up to {self.clock_khz / 1e6:.2f} GHz, {self.total_memory / 2**30:.1f} GiB, "
                 f"L2 {self.l2_bytes / 2**20:g} MiB",
                 f"per SM: {self.shared_per_sm // kib} KiB shared memory (a block up to "
                 f"{self.shared_per_block_optin // kib} KiB), {self.registers_per_sm} registers, "
                 f"{self.max_threads_per_sm} threads, {self.max_blocks_per_sm} blocks",
                 f"FP32 peak at that clock: {self.peak_fp32 / 1e12:.1f} TFLOP/s"]
        chip = self.datasheet
        lines.append(f"datasheet row: {chip.name} (FP32 {chip.peak('fp32') / 1e12:g} TFLOP/s, "
                     f"{chip.bandwidth.value / 1e12:g} TB/s)" if chip else
                     "datasheet row: none in the course's table (gl.perfmodel.HARDWARE)")
        return lines


def read(source):
    """The :class:`GPUSpec` of ``source`` (a :class:`DriverAttributes` or :class:`FakeAttributes`)."""
    values = {field: int(source.attribute(number)) for field, number in ATTRIBUTES.items()}
    return GPUSpec(name=source.name(), total_memory=int(source.total_memory()), **values)


class FakeAttributes:
    """A GPU described by hand: ``attributes`` maps :data:`ATTRIBUTES` names to the driver's values."""

    def __init__(self, name, total_memory, **attributes):
        missing = set(ATTRIBUTES) - set(attributes)
        if missing:
            raise ValueError(f"a fake GPU needs every attribute; missing {sorted(missing)}")
        self._name, self._memory = name, total_memory
        self._by_number = {ATTRIBUTES[k]: v for k, v in attributes.items()}

    def name(self):
        return self._name

    def total_memory(self):
        return self._memory

    def attribute(self, number):
        return self._by_number[number]


class DriverAttributes:
    """Device ``ordinal`` as the CUDA driver library reports it (ctypes; no context is made)."""

    def __init__(self, ordinal=0):
        self.lib = cudadriver.required()
        cudadriver.check(self.lib.cuInit(0), "cuInit", self.lib)
        self.device = ctypes.c_int()
        cudadriver.check(self.lib.cuDeviceGet(ctypes.byref(self.device), ordinal), "cuDeviceGet",
                         self.lib)

    def name(self):
        buffer = ctypes.create_string_buffer(256)
        cudadriver.check(self.lib.cuDeviceGetName(buffer, 256, self.device), "cuDeviceGetName",
                         self.lib)
        return buffer.value.decode(errors="replace")

    def total_memory(self):
        size = ctypes.c_size_t()
        cudadriver.check(self.lib.cuDeviceTotalMem_v2(ctypes.byref(size), self.device),
                         "cuDeviceTotalMem", self.lib)
        return size.value

    def attribute(self, number):
        value = ctypes.c_int()
        cudadriver.check(self.lib.cuDeviceGetAttribute(ctypes.byref(value), number, self.device),
                         f"cuDeviceGetAttribute({number})", self.lib)
        return value.value


def from_driver(ordinal=0):
    """The :class:`GPUSpec` of device ``ordinal``, or None without a driver or such a device."""
    if cudadriver.device_count() <= ordinal:
        return None
    return read(DriverAttributes(ordinal))
