"""What each lesson does on a given GPU: the table "what runs on your GPU" of docs/install.md.

Every lesson runs without a GPU (NumPy, MPI on the CPU in lessons 07, 09 and 14, CUDA kernels on
Numba's simulator at small sizes). With one, the GPU parts run at full size when the GPU meets their
requirement:

* the Numba kernels (lesson 00's first kernels, the GEMM ladder of lessons 01, 04, 05, 08, 10, 11
  and 15, lesson 16's worked attention kernel): compute capability 7.5 or newer (the oldest a CUDA 13 toolkit builds for; CUDA 12
  reaches back to 5.0) and each rung's GPU tiles within the block limits (threads, static shared
  memory);
* lesson 12: the Tensor Core paths ``gl.tensorcore.support(cc)`` says run (the WMMA kernel in FP16
  from 7.5, in BF16 from 8.0, the Hopper ladder on 9.0), else the NumPy emulation;
* the NCCL parts of lessons 07 and 09: two GPUs; on one, the lessons read the two-H200 runs
  recorded in benchmarks/.
"""
from . import kernels
from .tensorcore import paths

LESSONS = tuple(f"{n:02d}" for n in range(17))
KERNELS = ("00", "01", "04", "05", "08", "10", "11", "15", "16")
NCCL = ("07", "09")
MPI = ("07", "09", "14")
MIN_CC = (7, 5)


def ladder_fits(spec):
    """(ok, why) for the Numba kernels of the ladder on ``spec`` (a gpuspec.GPUSpec)."""
    if spec.compute_capability < MIN_CC:
        return False, f"compute capability {spec.cc_major}.{spec.cc_minor} < 7.5"
    for name in kernels.names():
        rung = kernels.get(name)
        plan = rung.plan(**rung.default_tiles("gpu"))
        if plan.threads > spec.max_threads_per_block or plan.smem_bytes > spec.shared_per_block:
            return False, f"{name}'s GPU tiles exceed a block's limits"
    return True, ""


def cell(lesson, spec, gpus=1):
    """What ``lesson`` ("05") runs on ``spec`` with ``gpus`` GPUs, in a few words."""
    if lesson not in LESSONS:
        raise ValueError(f"expected a lesson 00..16, got {lesson!r}")
    ladder, _ = ladder_fits(spec)
    if lesson in KERNELS:
        return "kernels on the GPU" if ladder else "simulator"
    if lesson in NCCL:
        return "NCCL on 2 GPUs" if gpus >= 2 else "CPU (MPI); 2-GPU runs recorded"
    if lesson == "12":
        runs = {name: path.runs for name, path in paths.support(spec.compute_capability).items()}
        formats = ", ".join(f for f, name in (("FP16", "wmma_fp16"), ("BF16", "wmma_bf16")) if runs[name])
        wmma = f"WMMA kernel ({formats})" if formats else "WMMA emulation"
        return wmma + " + Hopper ladder" if runs["hopper"] else wmma
    return "CPU (NumPy, MPI)" if lesson in MPI else "CPU (NumPy)"


def table(specs, gpus=1):
    """Markdown rows: one per lesson, one column per GPU of ``specs`` ({column name: GPUSpec})."""
    names = list(specs)
    lines = ["| lesson | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for lesson in LESSONS:
        lines.append(f"| {lesson} | " + " | ".join(cell(lesson, specs[n], gpus) for n in names) + " |")
    return lines
