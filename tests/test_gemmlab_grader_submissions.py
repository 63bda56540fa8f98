"""A class's submissions: the notebooks found in the folder's snapshot, their lessons, the
fixed slice of the students each shard grades, and the one notebook per student and lesson that
counts (the handed-out name, else the newest)."""
import collections

from pathlib import Path

import pytest

from gemmlab_grader.folders import FolderSnapshot
from gemmlab_grader.submissions import (Submission, find_submissions, handed_out, in_shard,
                                        lesson_of, one_per_lesson, parse_shard)


def test_checkpoints_and_entries_inside_a_notebook_named_folder_are_skipped(tmp_path):
    (tmp_path / "alice" / ".ipynb_checkpoints").mkdir(parents=True)
    (tmp_path / "alice" / ".ipynb_checkpoints" / "01_a-checkpoint.ipynb").write_text("{}")
    (tmp_path / "alice" / "01_a.ipynb").write_text("{}")
    (tmp_path / "odd.ipynb").mkdir()
    (tmp_path / "odd.ipynb" / "inner.ipynb").write_text("{}")
    found = find_submissions(FolderSnapshot(tmp_path))
    assert [(s.student, s.notebook, s.problem) for s in found] == [
        ("alice", "alice/01_a.ipynb", ""), ("odd", "odd.ipynb", "a folder, not a notebook file")]
    assert found[0].data == b"{}"


@pytest.mark.parametrize("name, forced, lesson", [
    ("01_numbers_and_precision.ipynb", None, "01"), ("07_mine.ipynb", None, "07"),
    ("alice.ipynb", None, None), ("alice.ipynb", "04", "04"), ("01_x.ipynb", "02", "02"),
    ("99_x.ipynb", None, None), ("1_x.ipynb", None, None),
    # 12b_hopper_ladder.ipynb is part 2 of lesson 12: its questions are lesson 12's
    ("12b_hopper_ladder.ipynb", None, "12"), ("12bc_x.ipynb", None, None), ("12-b_x.ipynb", None, None),
])
def test_the_lesson_comes_from_the_option_or_the_file_name(name, forced, lesson):
    assert lesson_of(Submission("s", name, None), forced) == lesson


@pytest.mark.parametrize("text, shard", [("1/1", (1, 1)), ("3/8", (3, 8)), (" 2 / 4 ", (2, 4))])
def test_a_shard_is_i_of_n_counted_from_one(text, shard):
    assert parse_shard(text) == shard


@pytest.mark.parametrize("text", ["0/4", "5/4", "1/0", "a/b", "1", "-1/4"])
def test_a_shard_out_of_range_is_refused(text):
    with pytest.raises(ValueError, match="counted from 1"):
        parse_shard(text)


def test_shards_split_the_students_whole_fixed_by_name_and_even_enough():
    subs = [Submission(f"student{i:03d}", f"student{i:03d}/{l:02d}_x.ipynb", None)
            for i in range(100) for l in range(16)]
    shards = [in_shard(subs, (i, 8)) for i in range(1, 9)]
    assert sorted(s.notebook for part in shards for s in part) == sorted(s.notebook for s in subs)
    owners = collections.defaultdict(set)
    for i, part in enumerate(shards, 1):
        for s in part:
            owners[s.student].add(i)
    assert all(len(o) == 1 for o in owners.values())          # a student is never split
    sizes = [len({s.student for s in part}) for part in shards]
    assert min(sizes) >= 5 and max(sizes) <= 22, sizes          # 12.5 each on average
    newcomer = Submission("newcomer", "newcomer/01_x.ipynb", None)
    for i in range(1, 9):                                       # a new student moves no one
        assert [s for s in in_shard(subs + [newcomer], (i, 8)) if s is not newcomer] == shards[i - 1]
    assert in_shard(subs, None) == subs


# --- one notebook per student and lesson ---------------------------------------------------------

def _sub(student, name, mtime):
    return Submission(student, f"{student}/{name}", None, mtime=mtime)


def test_the_handed_out_name_counts_over_a_newer_copy_and_the_copy_is_named():
    blank = _sub("alice", "07_ring_allreduce_exercises.ipynb", 1.0)
    copy = _sub("alice", "07_ring_allreduce_full.ipynb", 2.0)
    [kept] = one_per_lesson([copy, blank], names={"07": "07_ring_allreduce_exercises.ipynb"})
    assert kept is blank
    assert "the handed-out name 07_ring_allreduce_exercises.ipynb counts" in kept.remarks[0]
    assert "not graded: alice/07_ring_allreduce_full.ipynb" in kept.remarks[0]


def test_without_the_handed_out_name_the_newest_counts_and_the_others_are_named():
    guesses = [_sub("bob", f"07_guess{i}.ipynb", float(t)) for i, t in enumerate([3, 9, 1, 5])]
    kept = one_per_lesson(guesses + [_sub("bob", "08_x.ipynb", 0.0), _sub("bob", "notes.ipynb", 0)],
                          names={"07": "07_ring_allreduce_exercises.ipynb"})
    assert [s.notebook for s in kept] == ["bob/07_guess1.ipynb", "bob/08_x.ipynb",
                                          "bob/notes.ipynb"]
    assert all(f"bob/07_guess{i}.ipynb" in kept[0].remarks[0] for i in (0, 2, 3))
    assert not kept[1].remarks


def test_a_notebook_under_the_exercises_former_name_is_its_lessons():
    mine = _sub("carol", "05_tiled_gemm.ipynb", 5.0)     # from a student folder made before
    [kept] = one_per_lesson([mine], names=handed_out())
    assert kept is mine and lesson_of(kept) == "05" and not kept.remarks


def test_both_names_are_the_lessons_and_the_handed_out_name_counts_over_the_former_one():
    former = _sub("dan", "05_tiled_gemm.ipynb", 9.0)
    current = _sub("dan", "05_tiled_gemm_exercises.ipynb", 1.0)
    [kept] = one_per_lesson([former, current], names=handed_out())
    assert kept is current
    assert kept.remarks == ["2 notebooks of lesson 05 in this folder; graded "
                            "dan/05_tiled_gemm_exercises.ipynb (the handed-out name "
                            "05_tiled_gemm_exercises.ipynb counts, else the newest); not graded: "
                            "dan/05_tiled_gemm.ipynb"]


def test_the_handed_out_names_are_the_exercises():
    exercises = sorted(p.name for p in (Path(__file__).parents[1] / "exercises").glob("*.ipynb"))
    assert handed_out()["07"] == "07_ring_allreduce_exercises.ipynb"
    assert sorted(handed_out().values()) == exercises


def test_with_lesson_each_students_notebook_counts():
    subs = [Submission(n, f"{n}.ipynb", None) for n in ("a", "b")]
    assert one_per_lesson(subs, forced="07", names={}) == subs
