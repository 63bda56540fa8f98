"""docs/misconceptions.md: every listed misconception of both seeds has a row, every reference in
it resolves (the question exists and the answer named is one of its known wrong answers; the
notebook has that code cell), and at least 90% of each seed's rows are answered."""
import re

import pytest

from gemmlab import misconceptions as mc
from gemmlab.grading.bank import questions

ROWS = mc.entries()


def test_the_table_lists_both_seeds_in_full():
    by_seed = {seed: [e.key for e in ROWS if e.seed == seed] for seed in ("002", "000")}
    assert by_seed["000"] == [f"U{i:02d}" for i in range(1, 69)]   # 62 listed, 3 synthesis, 3 audit
    assert by_seed["002"] == [f"O{i:02d}" for i in range(1, len(by_seed["002"]) + 1)]
    assert len(by_seed["002"]) >= 62


def test_every_reference_resolves():
    assert mc.problems(ROWS) == []


@pytest.mark.parametrize("seed", ["002", "000"])
def test_at_least_90_percent_of_each_seeds_misconceptions_are_answered(seed):
    answered, listed = mc.coverage(ROWS)[seed]
    assert answered / listed >= 0.9, f"{seed}: {answered} of {listed}"


def test_the_tally_in_the_text_matches_the_table():
    text = mc.TABLE.read_text(encoding="utf-8")
    counts = mc.coverage(ROWS)
    assert f"opening lecture {counts['002'][0]} of {counts['002'][1]} answered" in text
    assert f"unit {counts['000'][0]} of {counts['000'][1]}" in text


def test_a_broken_reference_is_reported(tmp_path):
    table = tmp_path / "m.md"
    table.write_text(
        "| O01 | 002 · x | a wrong idea | `04.ridge_point` ← `13.96`; `04.nope` ← `1` |\n"
        "| O02 | 002 · y | another | `notebooks/00_start_here.ipynb#deadbeef`; `02.naive_matmul` ← wrong #9 |\n"
        "| O03 | 002 · z | a third | — |\n"
        "| O04 | 002 · w | a fourth | 04.ridge_point without backticks |\n", encoding="utf-8")
    rows = mc.entries(table)
    found = mc.problems(rows)
    assert any("04.ridge_point ← 13.96: not one of its known wrong answers" in p for p in found)
    assert any("no question 04.nope" in p for p in found)
    assert any("has no cell deadbeef" in p for p in found)
    assert any("not a #9" in p for p in found)
    assert any("O04: cannot read the reference" in p for p in found)
    assert mc.coverage(rows) == {"002": (2, 4)}


def test_feedback_speaks_of_the_course_not_the_seed():
    # students never meet the seed material: checks must not cite it
    for qid, q in questions().items():
        texts = [q.prompt, q.hint, q.explain] + [w.feedback for w in q.wrong]
        assert not any(re.search(r"\bseed", t, re.I) for t in texts), qid


@pytest.mark.parametrize("key,words", [
    ("O40", "does not make the pipeline infinitely fast"),      # the natural wrong answer inf
    ("O59", "high intensity does not make parallel work"),
    ("U22", "as if double buffering removed the loads"),        # 12 passes 08.stage_us; not here
    ("U37", "Occupancy cannot be ignored"),
])
def test_the_audited_rows_are_answered_by_feedback_that_names_their_idea(key, words):
    from gemmlab.grading import judge
    entry = next(e for e in ROWS if e.key == key)
    feedback = [judge(qid, mc.wrong_value(literal)).feedback for qid, literal in entry.wrong_values]
    assert any(words in text for text in feedback), feedback
