"""The Tensor Core instruction families, generation by generation: who issues an MMA, where its
operands and accumulator live, and which input types it takes with which K per step.

Lesson 12 reads this table to show that "16 x 16 x 16, one warp" is one family's picture (WMMA),
not a law, and what follows wgmma on Blackwell: ``tcgen05.mma``, whose accumulator lives in
Tensor Memory (TMEM) instead of registers. From NVIDIA's PTX ISA (sections "Warp-level matrix
instructions" wmma and mma, "Asynchronous warpgroup level matrix instructions" wgmma, "TensorCore
5th Generation family instructions" tcgen05) and the CUDA C++ Programming Guide's WMMA section.
"""
from dataclasses import dataclass

PTX_ISA = "NVIDIA PTX ISA, version 8.6 or later (docs.nvidia.com/cuda/parallel-thread-execution)"


@dataclass(frozen=True)
class Family:
    """One MMA instruction family: ``inputs`` maps an input type to the K of one step."""
    name: str
    first_arch: str         # the first architecture that has it
    issued_by: str
    operands_from: str
    accumulator_in: str
    inputs: dict
    shapes: str


FAMILIES = {
    "wmma": Family(
        "wmma (CUDA C++ nvcuda::wmma)", "sm_70 (Volta); INT8 from sm_72, BF16/TF32/FP64 from sm_80",
        "one warp, synchronously", "registers (fragments loaded from memory)", "registers",
        {"fp16": 16, "bf16": 16, "int8": 16, "tf32": 8, "fp64": 4},
        "m16n16k16, m32n8k16, m8n32k16 (FP16, BF16, INT8); m16n16k8 (TF32); m8n8k4 (FP64)"),
    "mma.sync": Family(
        "mma.sync (PTX)", "sm_70; the m16n8 shapes from sm_80", "one warp, synchronously",
        "registers", "registers",
        {"fp16": 16, "bf16": 16, "tf32": 8, "int8": 32, "fp8": 32},
        "m16n8k16 and m16n8k8 (FP16, BF16); m16n8k8 (TF32); m16n8k32 (INT8; FP8 from sm_89)"),
    "wgmma": Family(
        "wgmma.mma_async (PTX)", "sm_90a (Hopper) only", "a warpgroup (4 warps), asynchronously",
        "B from shared memory, A from shared memory or registers", "registers",
        {"fp16": 16, "bf16": 16, "tf32": 8, "fp8": 32, "int8": 32},
        "M = 64, N = 8 to 256 in steps of 8"),
    "tcgen05": Family(
        "tcgen05.mma (PTX)", "sm_100a (Blackwell data-centre: B200, GB200)",
        "one thread, for its block (or a pair of blocks), asynchronously",
        "B from shared memory, A from shared memory or Tensor Memory", "Tensor Memory (TMEM)",
        {"fp16": 16, "bf16": 16, "tf32": 8, "fp8": 32, "int8": 32, "fp4": 64},
        "M = 64 or 128 (256 over a pair of blocks), N up to 256"),
}

# Tensor Memory: per SM, 128 lanes (rows) by 512 columns of 32-bit cells, allocated by columns.
TMEM_LANES, TMEM_COLUMNS, TMEM_CELL_BYTES = 128, 512, 4


def tmem_bytes():
    """Bytes of Tensor Memory per SM: 128 x 512 cells of 4 bytes, 256 KiB."""
    return TMEM_LANES * TMEM_COLUMNS * TMEM_CELL_BYTES


def families_with(input_type):
    """The families (in generation order) whose MMAs take ``input_type`` ("int8", "fp8", ...)."""
    known = {t for f in FAMILIES.values() for t in f.inputs}
    if input_type not in known:
        raise ValueError(f"unknown input type {input_type!r}; the table has {', '.join(sorted(known))}")
    return [name for name, f in FAMILIES.items() if input_type in f.inputs]
