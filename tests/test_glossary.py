"""The glossary: lookups in both languages, Chinese terms spelled as the course material spells
them, the generated page up to date, and a link to it in every lesson's header."""
import json
import re
from pathlib import Path

import pytest

from gemmlab import colab, glossary

ROOT = Path(__file__).resolve().parent.parent
SEEDS = ROOT.parent / "shared" / "seeds"
PAGE = ROOT / "docs" / "glossary.md"
LESSONS = sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb"))
LINK = "](../docs/glossary.md)"


def test_lookup_in_either_language():
    assert glossary.lookup("tile").chinese == "分块"
    assert glossary.lookup("分块").english == "tile"
    assert glossary.lookup("部分和").english == "partial sum"
    assert glossary.lookup("Tensor Cores") is glossary.lookup("张量核心")
    assert glossary.lookup("HBM") is glossary.lookup("high-bandwidth memory")


def test_unknown_term_names_the_closest_ones():
    with pytest.raises(KeyError, match="did you mean 'tile'"):
        glossary.lookup("tiel")


def test_every_term_is_found_by_both_of_its_names():
    assert len(glossary.TERMS) >= 40
    for term in glossary.TERMS:
        assert glossary.lookup(term.english) is term
        if term.chinese != glossary.NOT_IN_MATERIAL:
            assert glossary.lookup(term.chinese) is term


def test_the_mark_for_no_chinese_term_is_no_name():
    assert sum(t.chinese == glossary.NOT_IN_MATERIAL for t in glossary.TERMS) >= 10
    with pytest.raises(KeyError):
        glossary.lookup(glossary.NOT_IN_MATERIAL)


@pytest.mark.skipif(not SEEDS.is_dir(), reason=f"the course material is not at {SEEDS}")
def test_every_chinese_term_is_spelled_as_in_the_course_material():
    material = "".join(p.read_text(encoding="utf-8") for p in SEEDS.glob("*.txt"))
    missing = [t.chinese for t in glossary.TERMS
               if t.chinese != glossary.NOT_IN_MATERIAL and t.chinese not in material]
    assert not missing, f"not in the course material: {missing}"


@pytest.mark.skipif(not SEEDS.is_dir(), reason=f"the course material is not at {SEEDS}")
def test_terms_marked_not_in_the_material_really_are_not_there():
    # a term the material has (even in English) must be listed with its spelling, not the mark
    material = "".join(p.read_text(encoding="utf-8") for p in SEEDS.glob("*.txt"))
    marked = [t for t in glossary.TERMS if t.chinese == glossary.NOT_IN_MATERIAL]
    for term in marked:
        short, _, abbreviation = term.english.partition(" (")
        for name in {term.english, short, abbreviation.rstrip(")")} - {""}:
            found = re.search(r"(?<!\w)" + re.escape(name) + r"(?!\w)", material, re.IGNORECASE)
            assert not found, f"{term.english!r} is marked as not in the material, yet it has {name!r}"
    # and the check does find a term the material keeps in English
    assert re.search(r"(?<!\w)ZeRO(?!\w)", material) and glossary.lookup("ZeRO").chinese == "ZeRO"


def test_glossary_page_is_up_to_date():
    assert PAGE.read_text(encoding="utf-8") == glossary.markdown(), (
        "docs/glossary.md is stale: run `python -m gemmlab.glossary docs/glossary.md`")


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_lesson_header_links_the_glossary(path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    # the lesson's own first markdown cell: the "Open in Colab" badge above it is not its header
    header = "".join(next(c for c in cells if c["cell_type"] == "markdown"
                          and c.get("id") != colab.LINK_ID)["source"])
    assert LINK in header, f"{path.name}: its header (first markdown cell) has no link to the glossary"


def test_meanings_follow_the_material_where_it_corrects_a_common_reading():
    # 通信量: what one rank sends (the material's convention), not sent plus received
    volume = glossary.lookup("通信量").meaning
    assert "one rank sends" in volume and "sends and receives" not in volume
    # DP is not "each replica holds all weights": ZeRO/FSDP shard them
    assert "ZeRO" in glossary.lookup("数据并行").meaning
    # shared memory is one part of the on-chip SRAM, not all of it
    assert "one part" in glossary.lookup("SRAM").meaning
    # orthogonal axes are chosen separately, their costs still interact
    assert "interact" in glossary.lookup("正交").meaning
    # bandwidth-bound is one kind of memory-bound (latency is the other)
    assert "latency" in glossary.lookup("访存受限").meaning
    assert "Q / B" in glossary.lookup("带宽受限").meaning
    # HBM is one kind of device memory, not every GPU's
    assert "not every GPU" in glossary.lookup("HBM").meaning
    # since Volta a warp's threads need not run in lockstep
    assert "must not assume lockstep" in glossary.lookup("warp").meaning


def test_overflow_says_what_each_format_does_as_the_precision_module_computes_it():
    import numpy as np
    from gemmlab import precision
    meaning = glossary.lookup("溢出").meaning
    for fmt, name in (("fp32", "FP32"), ("fp16", "FP16"), ("bf16", "BF16"), ("fp8_e5m2", "FP8 E5M2"),
                      ("fp8_e4m3", "FP8 E4M3")):
        too_large = float(precision.get_format(fmt).max) * 4
        result = precision.round_to(too_large, fmt)
        said = "NaN in " + name if np.isnan(result) else name
        assert (np.isnan(result) or np.isinf(result)) and said in meaning, (fmt, result, meaning)
    # E4M3's NaN is the non-saturating cast's; CUDA's __NV_SATFINITE conversion saturates
    assert "non-saturating" in meaning and "__NV_SATFINITE" in meaning and "±448" in meaning
    # a Tensor Core step is not one instruction: on the H200 a WMMA step is two HMMA
    tensor_core = glossary.lookup("张量核心").meaning
    assert "one instruction" not in tensor_core and "two HMMA instructions" in tensor_core


def test_meanings_give_the_figures_the_modules_compute():
    from gemmlab.collectives import allreduce_cost, double_binary_tree_cost
    from gemmlab.parallel.memory_per_rank import memory_per_rank
    from gemmlab.parallel.pipeline_schedule import bubble_formula, simulate
    from gemmlab.perfmodel import chip
    h200 = chip("H200 SXM")
    ridge = glossary.lookup("ridge point").meaning
    assert f"{h200.ridge_point('fp32'):.2f} FLOP/B" in ridge
    assert f"about {h200.ridge_point('fp16'):.0f} on FP16 Tensor Cores" in ridge
    # decode, M = 1..64 rows of an FP16 4096 x 4096 layer, stays far left of that ridge
    from gemmlab.perfmodel import linear_intensity
    decode = [linear_intensity(m, 4096, 4096, itemsize=2) for m in range(1, 65)]
    assert f"at most {max(decode):.0f} FLOP/B" in glossary.lookup("decode").meaning
    assert max(decode) < h200.ridge_point("fp16") / 3
    # the bubble is (p-1)/(m+p-1) for both schedules, as the simulator runs them
    assert "(p-1)/(m+p-1)" in glossary.lookup("pipeline bubble").meaning
    for p, m in ((4, 8), (2, 3), (8, 32)):
        for name in ("gpipe", "1f1b"):
            assert abs(simulate(name, p, m).bubble_fraction() - bubble_formula(p, m)) < 1e-12
        assert simulate("1f1b", p, m).peak_in_flight(0) == p and simulate("gpipe", p, m).peak_in_flight(0) == m
    assert "at most p - s micro-batches" in glossary.lookup("1F1B").meaning
    # ZeRO's stages shard optimizer state, then gradients, then weights: 16 B -> 4 + 12/n, 2 + 14/n, 16/n
    zero = glossary.lookup("ZeRO").meaning
    assert zero.index("optimizer state") < zero.index("gradients") < zero.index("weights")
    n, params = 8, 1.0
    dp, zero1, zero2, zero3 = (memory_per_rank(a, params, n)[0] for a in ("dp", "zero1", "zero2", "zero3"))
    assert (dp, zero1, zero2, zero3) == (16, 4 + 12 / n, 2 + 14 / n, 16 / n)
    # the binomial tree sends the whole message each round; the double binary tree about 2S
    assert allreduce_cost("tree", 64, 1.0).bytes == 2 * 6 and "2 ceil(log2 N) S" in glossary.lookup(
        "binomial tree").meaning
    assert abs(double_binary_tree_cost(64, 1.0, 10**6).bytes - 2) < 1e-4
    assert "about 2S" in glossary.lookup("double binary tree").meaning


def test_fp8_conversion_terms_say_what_each_rule_gives():
    import numpy as np
    from gemmlab import precision
    assert np.isnan(precision.round_to(500.0, "fp8_e4m3")) and np.isinf(precision.round_to(1e6, "fp8_e5m2"))
    non_saturating = glossary.lookup("non-saturating conversion").meaning
    assert "NaN in FP8 E4M3" in non_saturating and "inf in E5M2" in non_saturating
    saturating = glossary.lookup("saturating conversion").meaning
    e4m3_max = float(precision.get_format("fp8_e4m3").max)
    assert e4m3_max == 448 and f"±{e4m3_max:.0f}" in saturating and "__NV_SATFINITE" in saturating
    assert "448 / amax" in glossary.lookup("per-tensor scale").meaning
