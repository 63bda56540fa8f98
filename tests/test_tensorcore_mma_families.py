"""The table of MMA instruction families lesson 12 prints: INT8 is an input type of every family
since Turing, FP8 only from Ada/Hopper on, and Blackwell's tcgen05 keeps its sums in TMEM."""
import pytest

from gemmlab.perfmodel import sm_resources
from gemmlab.tensorcore import mma_families as mf


def test_int8_and_fp8_are_where_the_ptx_isa_puts_them():
    assert mf.families_with("int8") == ["wmma", "mma.sync", "wgmma", "tcgen05"]
    assert mf.families_with("fp8") == ["mma.sync", "wgmma", "tcgen05"]       # not in WMMA
    assert mf.families_with("fp4") == ["tcgen05"]
    with pytest.raises(ValueError, match="int8"):
        mf.families_with("int9")


def test_a_wgmma_or_tcgen05_step_covers_32_bytes_of_k():
    for family in mf.FAMILIES.values():
        for kind, k in family.inputs.items():
            bits = {"fp16": 16, "bf16": 16, "tf32": 32, "int8": 8, "fp8": 8, "fp4": 4}.get(kind)
            if bits and family.name.startswith(("wgmma", "tcgen05")):
                assert k * bits == 256, (family.name, kind)


def test_tcgen05_accumulates_in_tensor_memory_as_large_as_the_register_file():
    assert mf.FAMILIES["tcgen05"].accumulator_in.startswith("Tensor Memory")
    assert all(f.accumulator_in == "registers" for n, f in mf.FAMILIES.items() if n != "tcgen05")
    assert mf.tmem_bytes() == 256 * 1024 == 4 * sm_resources((10, 0)).registers
