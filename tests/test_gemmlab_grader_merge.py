"""Merging the outputs of a class graded in shards into one report, and refusing shards that do
not fit together."""
import json
import os
import subprocess
import sys

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from gemmlab_grader import merge, publish
from gemmlab_grader.grade import NotebookGrade
from test_gemmlab_grader_sandbox import WHERE_IT_WORKS


def _shard(folder, i, n, students, jobs=2, trusted=False):
    grades = [NotebookGrade(s, f"{s}/01_x.ipynb", "01", {"01.weights_gib": "pass"},
                            {"01.weights_gib": "ok"}) for s in students]
    publish.write_all(grades, folder, {"jobs": jobs, "sandbox": True, "shard": [i, n],
                                       "warnings": [f"a warning of {i}"],
                                       "trusted": trusted, "interrupted": False})
    return folder


def _merge(*args):
    return subprocess.run([sys.executable, "-m", "gemmlab_grader", "merge", *map(str, args)],
                          capture_output=True, text=True, timeout=300)


def test_shards_merge_into_one_report_of_the_class(tmp_path):
    a = _shard(tmp_path / "a", 1, 2, ["alice", "bob"])
    b = _shard(tmp_path / "b", 2, 2, ["carol"], jobs=3)
    done = _merge(a, b, "--out", tmp_path / "all")
    assert done.returncode == 0, done.stderr
    info = json.loads((tmp_path / "all" / "grades.json").read_text())
    assert [r["student"] for r in info["notebooks"]] == ["alice", "bob", "carol"]
    assert [s["shard"] for s in info["shards"]] == [[1, 2], [2, 2]]
    assert [s["jobs"] for s in info["shards"]] == [2, 3] and "seed" not in info     # never reported
    assert "shard 2/2: a warning of 2" in info["warnings"]
    assert (tmp_path / "all" / "grades-lms.csv").read_text().count("\n") == 4
    assert "carol" in done.stdout


def test_a_missing_shard_is_named_in_the_report(tmp_path):
    a = _shard(tmp_path / "a", 1, 3, ["alice"])
    info, _grades = merge.merge([(a, *merge.load(a))])
    assert info["warnings"][0].startswith("shards missing: 2/3, 3/3")


def test_a_shard_whose_warnings_are_not_a_list_of_texts_still_merges(tmp_path):
    a = _shard(tmp_path / "a", 1, 1, ["alice"])
    info, grades = merge.load(a)
    for planted in (5, {"x": 1}, None, [3, "kept"]):
        merged, _ = merge.merge([(a, dict(info, warnings=planted), grades)])
        assert merged["warnings"] == (["shard 1/1: kept"] if planted == [3, "kept"] else [])


@pytest.mark.parametrize("second, message", [
    ((2, 3, ["alice"]), "graded in both"), ((1, 3, ["bob"]), "are both shard 1/3"),
    ((2, 4, ["bob"]), "not shards of one run"),
])
def test_shards_that_do_not_fit_together_are_refused(tmp_path, second, message):
    a = _shard(tmp_path / "a", 1, 3, ["alice"])
    b = _shard(tmp_path / "b", *second)
    done = _merge(a, b, "--out", tmp_path / "all")
    assert done.returncode == 2 and message in done.stderr
    assert not (tmp_path / "all").exists()


@pytest.mark.parametrize("content, message", [
    (None, "no readable grades.json"), ("[1, 2", "is not JSON"),
    ('{"notebooks": [{"student": 1}]}', "has no student"),
    ('{"notebooks": [{"student": "a", "notebook": "a/01.ipynb", "lesson": "01", '
     '"results": {"01.weights_gib": "PASS!!"}}]}', "unknown verdicts"),
    ("[" * 100000 + "]" * 100000, "is not JSON"),
])
def test_malformed_shard_outputs_are_refused_with_the_reason(tmp_path, content, message):
    (tmp_path / "a").mkdir()
    if content is not None:
        (tmp_path / "a" / "grades.json").write_text(content)
    with pytest.raises(merge.ShardError, match=message):
        merge.load(tmp_path / "a")


def test_a_shard_graded_trusted_makes_the_merge_say_so(tmp_path):
    a = _shard(tmp_path / "a", 1, 2, ["alice"], trusted=True)
    b = _shard(tmp_path / "b", 2, 2, ["bob"])
    assert _merge(a, b, "--out", tmp_path / "all").returncode == 0
    info = json.loads((tmp_path / "all" / "grades.json").read_text())
    assert info["trusted"] is True and [s["trusted"] for s in info["shards"]] == [True, False]


@pytest.mark.slow
def test_a_class_graded_in_shards_and_merged_equals_the_class_graded_at_once(tmp_path):
    """Real grading: three students, two answers each right or wrong, graded two at a time in one
    run and as shards 1/2 and 2/2 (one at a time); the merged report holds the same verdicts."""
    answers = {"alice": "7e9 * 2 / 2**30", "bob": "7", "carol": "7e9 * 2 / 2**30"}
    for student, value in answers.items():
        folder = tmp_path / "subs" / student
        folder.mkdir(parents=True)
        nbformat.write(new_notebook(cells=[new_code_cell(f"weights_gib = {value}")]),
                       folder / "01_x.ipynb")
    common = ["--seed", "3", "--timeout", "60", "--notebook-timeout", "600", *WHERE_IT_WORKS]

    def grade(*args):
        done = subprocess.run([sys.executable, "-m", "gemmlab_grader", "subs", *common, *args],
                              cwd=tmp_path, capture_output=True, text=True, timeout=900,
                              env=dict(os.environ, GEMMLAB_BACKEND="sim"))
        assert done.returncode == 0, done.stderr
        return done

    grade("--out", "whole", "--jobs", "2")
    for i in (1, 2):
        grade("--out", f"shard{i}", "--shard", f"{i}/2", "--jobs", "1")
    done = _merge(tmp_path / "shard1", tmp_path / "shard2", "--out", tmp_path / "merged")
    assert done.returncode == 0, done.stderr

    def verdicts(name):
        info = json.loads((tmp_path / name / "grades.json").read_text())
        return {r["student"]: r["results"] for r in info["notebooks"]}, info

    whole, info = verdicts("whole")
    merged, _ = verdicts("merged")
    assert info["jobs"] == 2 and sorted(whole) == sorted(answers)   # as asked, sandbox or not
    assert merged == whole
    assert [whole[s]["01.weights_gib"] for s in sorted(answers)] == ["pass", "fail", "pass"]
    shards = [set(verdicts(f"shard{i}")[0]) for i in (1, 2)]
    assert not shards[0] & shards[1] and shards[0] | shards[1] == set(answers)
    assert ((tmp_path / "merged" / "grades-lms.csv").read_text()
            == (tmp_path / "whole" / "grades-lms.csv").read_text())
