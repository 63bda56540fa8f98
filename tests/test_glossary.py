"""The glossary: lookups in both languages, Chinese terms spelled as the course material spells
them, the generated page up to date, and a link to it in every lesson's header."""
import json
from pathlib import Path

import pytest

from gemmlab import glossary

ROOT = Path(__file__).resolve().parent.parent
SEEDS = ROOT.parent / "shared" / "seeds"
PAGE = ROOT / "docs" / "glossary.md"
LESSONS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
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
        assert glossary.lookup(term.chinese) is term


@pytest.mark.skipif(not SEEDS.is_dir(), reason=f"the course material is not at {SEEDS}")
def test_every_chinese_term_is_spelled_as_in_the_course_material():
    material = "".join(p.read_text(encoding="utf-8") for p in SEEDS.glob("*.txt"))
    missing = [t.chinese for t in glossary.TERMS if t.chinese not in material]
    assert not missing, f"not in the course material: {missing}"


def test_glossary_page_is_up_to_date():
    assert PAGE.read_text(encoding="utf-8") == glossary.markdown(), (
        "docs/glossary.md is stale: run `python -m gemmlab.glossary docs/glossary.md`")


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_lesson_header_links_the_glossary(path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    header = "".join(next(c for c in cells if c["cell_type"] == "markdown")["source"])
    assert LINK in header, f"{path.name}: its first markdown cell has no link to the glossary"
