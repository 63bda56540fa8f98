"""The GPUs a student may have, from a free Colab T4 to a B200: datasheet figures, each with where it
was read and how it was obtained. ``perfmodel.hardware`` is the way in (``chip``, ``chip_for``,
``table``); this module only holds the rows.

Conventions, so that figures of different chips compare:

* Peaks are **dense** FLOP/s at the **boost clock**. Where a datasheet prints a Tensor Core peak
  only "with sparsity" (2:4 structured sparsity doubles it), the row stores half of it, marked
  :data:`SPARSE_HALVED`.
* Tensor Core peaks are those with **FP32 accumulation**, which is what the course's kernels and
  cuBLAS's FP16 -> FP32 GEMM use. On data-centre GPUs FP16 and FP32 accumulation run at the same
  rate; on GeForce cards FP32 accumulation runs at half the FP16-accumulate rate that marketing
  pages often quote.
* ``fp16`` and ``bf16`` are Tensor Core figures, ``fp32`` the CUDA cores' FMA peak (no TF32).
* A data type a chip has no fast path for is **absent** from ``peaks``; a figure the sources we
  could read do not confirm is **None** ("?" in :func:`~gemmlab.perfmodel.hardware.table`). Nothing
  is filled in by guesswork.
* Cache sizes that vendors print in "MB" are binary (a 40 MB L2 is 40 MiB, 41,943,040 bytes, as
  the driver reports it).

The vendor PDFs themselves could not be opened from where this table was written (2026-12-01):
each source names the vendor document and the public page through which its figures were read.
"""
from dataclasses import dataclass, field

DATASHEET = "datasheet"                       # printed as a dense peak
SPARSE_HALVED = "datasheet sparse figure / 2"  # printed with sparsity; the dense peak is half
MEASURED = "measured"                         # measured on a real device, e.g. in lesson 04
DERIVED = "derived"                           # computed from other sourced figures (says how)
DEVICE_QUERY = "driver attribute"             # what the CUDA driver reports for that GPU

DTYPES = ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8")
MIB = 1 << 20


@dataclass(frozen=True)
class Source:
    """Where a figure comes from: the document (and what in it), an address, and a date: the
    document's own date where it has one, else the day it was read."""
    what: str
    url: str
    date: str

    def __str__(self):
        return f"{self.what} ({self.url}), {self.date}"


@dataclass(frozen=True)
class Figure:
    """One hardware number: value in SI base units, its unit, where it comes from, and how."""
    value: float
    unit: str
    source: object        # a Source, or text for the figures of the memory path
    basis: str = DATASHEET
    note: str = ""

    @property
    def is_measured(self):
        return self.basis == MEASURED


@dataclass(frozen=True)
class Chip:
    """A GPU: dense peak FLOP/s per data type, memory bandwidth and capacity, SMs, L2, compute
    capability, boost clock, and the names the CUDA driver gives it (for :func:`chip_for`)."""
    name: str
    peaks: dict
    bandwidth: Figure
    capacity: Figure
    sms: Figure
    compute_capability: tuple = None
    boost_clock: Figure = None
    l2: Figure = None
    memory: str = ""
    device_names: tuple = ()          # lower-case names (or their starts) the driver gives it
    source: Source = None             # the row's main document
    notes: tuple = field(default_factory=tuple)

    def peak(self, dtype="fp32"):
        """Dense peak FLOP/s for ``dtype`` (one of :data:`DTYPES`)."""
        if dtype not in DTYPES:
            raise ValueError(f"unknown data type {dtype!r}; expected one of {', '.join(DTYPES)}")
        if dtype not in self.peaks:
            raise ValueError(f"the {self.name} has no {dtype} peak (its hardware has no {dtype} path)")
        if self.peaks[dtype] is None:
            raise ValueError(f"the {self.name}'s {dtype} peak is not confirmed by the sources of "
                             f"the course's table; see gemmlab/perfmodel/datasheets.py")
        return self.peaks[dtype].value

    def ridge_point(self, dtype="fp32"):
        """Intensity (FLOP/B) where the bandwidth roof meets the compute roof: P / B."""
        return self.peak(dtype) / self.bandwidth.value


def _tflops(value, source, basis=DATASHEET, note=""):
    return Figure(value * 1e12, "FLOP/s", source, basis, note)


def _sparse(printed_tflops, source):
    return _tflops(printed_tflops / 2, source, SPARSE_HALVED)


def _tbs(value, source, basis=DATASHEET):
    return Figure(value * 1e12, "B/s", source, basis)


def _gb(value, source, basis=DATASHEET):
    return Figure(value * 1e9, "B", source, basis)


def _sms(count, source, basis=DATASHEET, note=""):
    return Figure(count, "SMs", source, basis, note)


def _mhz(value, source, basis=DATASHEET):
    return Figure(value * 1e6, "Hz", source, basis)


def _l2_mib(value, source, basis=DATASHEET, note=""):
    return Figure(value * MIB, "B", source, basis, note)


READ = "read 2026-12-01"

# ---------------------------------------------------------------- the documents (and pages read)

T4_DS = Source("NVIDIA T4 Tensor Core GPU datasheet (FP32 8.1 TFLOPS, mixed-precision FP16/FP32 "
               "65 TFLOPS, 16 GB GDDR6, 320 GB/s), as quoted with the 40 SMs and 1,590 MHz boost",
               "https://sysrqmts.com/en/gpus/nvidia/tesla/t4", READ)
T4_QUERY = Source("deviceQuery on a Tesla T4 (40 SMs, 1590 MHz, L2 4194304 bytes)",
                  "https://gist.github.com/Terminus-IMRC/5e4b7782c27106dec287050b323cd059", READ)
L4_DS = Source("NVIDIA L4 Tensor Core GPU datasheet (FP32 30.3 TFLOPS; TF32 120, FP16/BF16 242, "
               "FP8 485 TFLOPS with sparsity; 24 GB, 300 GB/s; 2,040 MHz boost), as quoted",
               "https://store.sourcecode.com/en-us/bg-bucket-compare/125/9820", READ)
L4_L2 = Source("NVIDIA L4 (AD104) specifications: L2 48 MB, 7,424 shading units",
               "https://fpsbench.com/compare/gpu/nvidia-l4-vs-nvidia-tesla-m40", READ)
A10_DS = Source("NVIDIA A10 Tensor Core GPU datasheet (FP16 Tensor 125 TFLOPS, 24 GB GDDR6, "
                "600 GB/s), as quoted", "https://gist.github.com/kimbochen", READ)
A10_SPEC = Source("NVIDIA A10 (GA102) specifications: 72 SMs, 1,695 MHz boost, FP32 31.24 TFLOPS, "
                  "L2 6 MB", "https://sysrqmts.com/ru/gpus/compare/nvidia-a10-pcie-vs-nvidia-quadro-rtx-4000",
                  READ)
A40_DS = Source("NVIDIA A40 datasheet (84 SMs, 1,740 MHz: TF32 74.8, BF16 with FP32 accumulate "
                "149.7 TFLOPS dense)",
                "https://www.ecer.com/corp/details-uuuedqa-p1bsay9-multi-display-setups-supported-by-48gb-gddr6-ecc-memory-nvidia-a40-gpu-and-vga-outputs.html",
                READ)
A100_DS = Source("NVIDIA A100 Tensor Core GPU datasheet, nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf "
                 "(40 GB: 1,555 GB/s; 80 GB SXM: 2,039 GB/s; peaks of both)",
                 "https://glennklockwood.com/garden/processors/A100", READ)
A100_QUERY = Source("deviceQuery on an A100-SXM4-40GB (108 SMs, 1410 MHz, L2 41943040 bytes)",
                    "https://upb-pc2.atlassian.net/wiki/spaces/PC2DOK/pages/1900609/NVIDIA+A100+40GB+with+NVLINK",
                    READ)
GA102_3090 = Source("NVIDIA GeForce RTX 3090 specifications (GA102 whitepaper figures: 82 SMs, "
                    "1,695 MHz, FP32 35.6 TFLOPS, FP16 Tensor 142 (FP16 accumulate), 936 GB/s)",
                    "https://holynerdvana.blogspot.com/2022/10/nvidia-geforce-rtx-3090-specifications.html",
                    READ)
R3090_FP32ACC = Source("RTX 3090 FP16 Tensor with FP32 accumulate: 71 TFLOPS (half the FP16-"
                       "accumulate rate on GeForce)",
                       "https://huggingface.co/datasets/Fdddhhhill/Advanced_AI_GPU_Benchmark_Dataset.csv",
                       READ)
R3090_QUERY = Source("deviceQuery on a GeForce RTX 3090 (82 SMs, L2 6291456 bytes, 1536 threads "
                     "and 102400 bytes of shared memory per SM)",
                     "https://github.com/Jumperkables/cuda-benchmarking/blob/main/00_deviceQuery/README.md",
                     READ)
AD102_4090 = Source("NVIDIA GeForce RTX 4090 (Ada whitepaper figures: 128 SMs, 2,520 MHz, FP32 "
                    "82.58, FP16 and BF16 Tensor with FP32 accumulate 165.2, TF32 82.58, FP8 with "
                    "FP32 accumulate 330.3 TFLOPS dense; 1,008 GB/s)",
                    "https://hmc-tech.com/gpus/nvidia-geforce-rtx-4090-vs-nvidia-rtx-pro-5000-blackwell",
                    READ)
R4090_L2 = Source("RTX 4090: 72 MB L2, 24 GB GDDR6X",
                  "https://www.techgoing.com/nvidia-rtx-4090-gaming-graphics-cards-break-100-tflops-for-the-first-time/",
                  READ)
GB202_5090 = Source("NVIDIA GeForce RTX 5090 specifications (170 SMs, 2,407 MHz, 32 GB GDDR7, "
                    "1,792 GB/s, 96 MB L2, FP32 104 TFLOPS)",
                    "https://pocketmags.com/linux-format-magazine/may-2025/articles/nvidia-geforce-rtx-5090",
                    READ)
H100_DS = Source("NVIDIA H100 Tensor Core GPU datasheet, SXM and PCIe columns (SMs, FP32, Tensor "
                 "Core peaks with sparsity, HBM bandwidth, 50 MB L2)",
                 "https://archive-lib.hpctech.co.jp/gpuproduct/nvidia-h100.html", READ)
H100_CLOCK = Source("H100 SXM5: 1.98 GHz boost (the clock its 67 TFLOPS FP32 implies)",
                    "https://glennklockwood.com/garden/processors/h100", READ)
H200_DS = Source("NVIDIA H200 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/h200), SXM "
                 "column: 141 GB HBM3e, 4.8 TB/s, FP32 67 TFLOPS, Tensor Core peaks with sparsity",
                 "https://www.nvidia.com/en-us/data-center/h200/", "2024")
H200_HERE = Source("the course's H200: Nsight Compute '# SMs', the driver's attributes "
                   "(benchmarks/gpu_occupancy.json) and clock (gpu_ladder_h200_events.json: FP32 "
                   "peak 66.908 TFLOPS = 132 x 128 x 2 x 1.98 GHz)", "benchmarks/", "2026-11-30")
B200_DS = Source("NVIDIA HGX B200 specifications, per GPU (FP32 75 TFLOPS; FP16/BF16 4.5, TF32 "
                 "2.2, FP8 9 PFLOPS with sparsity; 180 GB HBM3e, 7.7 TB/s), as quoted",
                 "https://zdszero.github.io/Computer/Artificial_Intelligence/Hardware.html", READ)
B200_MAX = Source("NVIDIA B200 as quoted from NVIDIA's launch material: 8 TB/s (max) of HBM3e "
                  "bandwidth per GPU", "https://glennklockwood.com/garden/processors/B200",
                  "read 2026-12-06")
B200_SPEC = Source("NVIDIA B200 specifications: 148 SMs, 1.98 GHz boost (148 x 128 x 2 x 1.98 GHz "
                   "= 75.0 TFLOPS FP32)", "https://hmc-tech.com/gpus/nvidia-b200-vs-nvidia-gb200", READ)


def _hopper_peaks(source, fp32=67, fp64=34, tf32=989, fp16=1979, fp8=3958):
    # H100 SXM and H200 SXM share the GH100 compute; only their memory differs.
    return {"fp64": _tflops(fp64, source), "fp32": _tflops(fp32, source),
            "tf32": _sparse(tf32, source), "fp16": _sparse(fp16, source),
            "bf16": _sparse(fp16, source), "fp8": _sparse(fp8, source)}


def _a100_peaks(source):
    return {"fp64": _tflops(9.7, source), "fp32": _tflops(19.5, source),
            "tf32": _tflops(156, source), "fp16": _tflops(312, source), "bf16": _tflops(312, source)}


_A10_SCALE = "the A40 datasheet figure x (72/84 SMs) x (1,695/1,740 MHz)"

HARDWARE = {
    "T4": Chip(
        "T4", {"fp64": None, "fp32": _tflops(8.1, T4_DS), "fp16": _tflops(65, T4_DS)},
        bandwidth=_tbs(0.320, T4_DS), capacity=_gb(16, T4_DS),
        sms=_sms(40, T4_QUERY, DEVICE_QUERY), compute_capability=(7, 5),
        boost_clock=_mhz(1590, T4_QUERY, DEVICE_QUERY), l2=_l2_mib(4, T4_QUERY, DEVICE_QUERY),
        memory="GDDR6", device_names=("tesla t4", "nvidia t4"), source=T4_DS,
        notes=("Turing: no TF32, BF16 or FP8 Tensor Core path.",)),
    "L4": Chip(
        "L4", {"fp64": None, "fp32": _tflops(30.3, L4_DS), "tf32": _sparse(120, L4_DS),
               "fp16": _sparse(242, L4_DS), "bf16": _sparse(242, L4_DS), "fp8": _sparse(485, L4_DS)},
        bandwidth=_tbs(0.300, L4_DS), capacity=_gb(24, L4_DS),
        sms=_sms(58, L4_DS, DERIVED, "30.3 TFLOPS / (128 lanes x 2 x 2.04 GHz) = 58; pages disagree "
                                     "(58 or 60): the driver's count on a real L4 decides"),
        compute_capability=(8, 9), boost_clock=_mhz(2040, L4_DS), l2=_l2_mib(48, L4_L2),
        memory="GDDR6", device_names=("nvidia l4",), source=L4_DS),
    "A10": Chip(
        "A10", {"fp64": None, "fp32": _tflops(31.2, A10_SPEC),
                "tf32": _tflops(62.5, A40_DS, DERIVED, _A10_SCALE), "fp16": _tflops(125, A10_DS),
                "bf16": _tflops(125, A40_DS, DERIVED, _A10_SCALE)},
        bandwidth=_tbs(0.600, A10_DS), capacity=_gb(24, A10_DS), sms=_sms(72, A10_SPEC),
        compute_capability=(8, 6), boost_clock=_mhz(1695, A10_SPEC), l2=_l2_mib(6, A10_SPEC),
        memory="GDDR6", device_names=("nvidia a10",), source=A10_DS),
    "A100 40GB": Chip(
        "A100 40GB", _a100_peaks(A100_DS),
        bandwidth=_tbs(1.555, A100_DS), capacity=_gb(40, A100_DS),
        sms=_sms(108, A100_QUERY, DEVICE_QUERY), compute_capability=(8, 0),
        boost_clock=_mhz(1410, A100_QUERY, DEVICE_QUERY), l2=_l2_mib(40, A100_QUERY, DEVICE_QUERY),
        memory="HBM2", device_names=("a100-sxm4-40gb", "a100-pcie-40gb", "a100 40gb"),
        source=A100_DS),
    "A100 SXM": Chip(                   # the 80 GB SXM4 part (the course's name since lesson 00)
        "A100 SXM", _a100_peaks(A100_DS),
        bandwidth=_tbs(2.039, A100_DS), capacity=_gb(80, A100_DS),
        sms=_sms(108, A100_QUERY, DEVICE_QUERY), compute_capability=(8, 0),
        boost_clock=_mhz(1410, A100_QUERY, DEVICE_QUERY), l2=_l2_mib(40, A100_QUERY, DEVICE_QUERY),
        memory="HBM2e", device_names=("a100-sxm4-80gb", "a100-sxm-80gb"), source=A100_DS,
        notes=("80 GB SXM4; the 80 GB PCIe card has 1,935 GB/s.",)),
    "RTX 3090": Chip(
        "RTX 3090", {"fp64": None, "fp32": _tflops(35.6, GA102_3090),
                     "tf32": None, "fp16": _tflops(71, R3090_FP32ACC), "bf16": None},
        bandwidth=_tbs(0.936, GA102_3090), capacity=_gb(24, GA102_3090),
        sms=_sms(82, R3090_QUERY, DEVICE_QUERY), compute_capability=(8, 6),
        boost_clock=_mhz(1695, GA102_3090), l2=_l2_mib(6, R3090_QUERY, DEVICE_QUERY),
        memory="GDDR6X", device_names=("rtx 3090",), source=GA102_3090,
        notes=("TF32 and BF16 Tensor Core peaks: not confirmed by the pages read.",)),
    "RTX 4090": Chip(
        "RTX 4090", {"fp64": None, "fp32": _tflops(82.58, AD102_4090),
                     "tf32": _tflops(82.58, AD102_4090), "fp16": _tflops(165.2, AD102_4090),
                     "bf16": _tflops(165.2, AD102_4090), "fp8": _tflops(330.3, AD102_4090)},
        bandwidth=_tbs(1.008, AD102_4090), capacity=_gb(24, R4090_L2),
        sms=_sms(128, AD102_4090), compute_capability=(8, 9),
        boost_clock=_mhz(2520, AD102_4090), l2=_l2_mib(72, R4090_L2),
        memory="GDDR6X", device_names=("rtx 4090",), source=AD102_4090),
    "RTX 5090": Chip(
        "RTX 5090", {"fp64": None, "fp32": _tflops(104.8, GB202_5090, DERIVED,
                                                   "170 SMs x 128 lanes x 2 x 2.407 GHz; the page prints 104"),
                     "tf32": None, "fp16": None, "bf16": None, "fp8": None},
        bandwidth=_tbs(1.792, GB202_5090), capacity=_gb(32, GB202_5090),
        sms=_sms(170, GB202_5090), compute_capability=(12, 0),
        boost_clock=_mhz(2407, GB202_5090), l2=_l2_mib(96, GB202_5090),
        memory="GDDR7", device_names=("rtx 5090",), source=GB202_5090,
        notes=("Tensor Core peaks with FP32 accumulation: not confirmed by the pages read (the "
               "838 TFLOPS quoted is FP16 accumulation with sparsity).",)),
    "H100 PCIe": Chip(
        "H100 PCIe", _hopper_peaks(H100_DS, fp32=51, fp64=26, tf32=756, fp16=1513, fp8=3026),
        bandwidth=_tbs(2.0, H100_DS), capacity=_gb(80, H100_DS), sms=_sms(114, H100_DS),
        compute_capability=(9, 0), boost_clock=_mhz(1755, H100_DS, DERIVED),
        l2=_l2_mib(50, H100_DS), memory="HBM2e", device_names=("h100 pcie",), source=H100_DS,
        notes=("Boost clock derived: 51.2 TFLOPS / (114 x 128 x 2).",)),
    "H100 SXM": Chip(
        "H100 SXM", _hopper_peaks(H100_DS),
        bandwidth=_tbs(3.35, H100_DS), capacity=_gb(80, H100_DS), sms=_sms(132, H100_DS),
        compute_capability=(9, 0), boost_clock=_mhz(1980, H100_CLOCK), l2=_l2_mib(50, H100_DS),
        memory="HBM3", device_names=("h100 80gb hbm3", "h100 sxm"), source=H100_DS),
    "H200 SXM": Chip(
        "H200 SXM", _hopper_peaks(H200_DS),
        bandwidth=_tbs(4.8, H200_DS), capacity=_gb(141, H200_DS),
        sms=_sms(132, H200_HERE, MEASURED), compute_capability=(9, 0),
        boost_clock=_mhz(1980, H200_HERE, DEVICE_QUERY),
        l2=_l2_mib(50, H100_DS, DERIVED, "the GH100's L2 (H100 SXM column); the H200 datasheet "
                                         "prints none: benchmarks/gpu_device.sh records the driver's"),
        memory="HBM3e", device_names=("h200",), source=H200_DS),
    "B200": Chip(
        "B200", {"fp64": _tflops(37, B200_DS), "fp32": _tflops(75, B200_DS),
                 "tf32": _sparse(2200, B200_DS), "fp16": _sparse(4500, B200_DS),
                 "bf16": _sparse(4500, B200_DS), "fp8": _sparse(9000, B200_DS)},
        bandwidth=_tbs(7.7, B200_DS), capacity=_gb(180, B200_DS), sms=_sms(148, B200_SPEC),
        compute_capability=(10, 0), boost_clock=_mhz(1980, B200_SPEC), l2=None,
        memory="HBM3e", device_names=("b200",), source=B200_DS,
        notes=("HGX B200 at up to 1,000 W; the GB200 runs higher clocks. L2 size: not confirmed.",
               "NVIDIA prints two bandwidths for the B200: 7.7 TB/s per GPU in the HGX B200 "
               "specifications (kept here) and 8 TB/s (max) elsewhere (B200_BANDWIDTH_ALSO_PRINTED).")),
}

# The B200's other printed bandwidth (see its note): lesson 04 shows both.
B200_BANDWIDTH_ALSO_PRINTED = _tbs(8, B200_MAX)
