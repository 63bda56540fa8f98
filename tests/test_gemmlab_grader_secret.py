"""A run's secret: kept beside the reports in a file only its owner reads, and read back with
--seed-file, a regrade draws the same hidden cases and gives the same verdicts; a fresh run
draws others."""
import json

import pytest

from gemmlab_grader import secret
from test_gemmlab_grader_grade import _cli, _write

# wrong on every case, so the feedback shows the hidden case it failed on
WRONG = "def row_major_index(r, c, rows, cols):\n    return r * cols + c + 1"


def _run(root, out, *extra):
    done = _cli("subs", "--lesson", "2", "--out", out, "--timeout", "60", *extra, cwd=root)
    assert done.returncode == 0, done.stderr
    rows = json.loads((root / out / "grades.json").read_text())["notebooks"]
    return {r["student"]: (r["results"], r["feedback"]) for r in rows}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("regrade")
    for student in ("alice", "bob"):
        _write(root / "subs" / f"{student}.ipynb", WRONG)
    first = _run(root, "first")
    again = _run(root, "again", "--seed-file", root / "first" / secret.FILE)
    fresh = _run(root, "fresh")
    return root, first, again, fresh


def test_the_secret_is_kept_in_a_private_file_beside_the_reports(runs):
    root = runs[0]
    kept = root / "first" / secret.FILE
    assert kept.stat().st_mode & 0o777 == 0o600
    assert len(secret.read(kept)) == 32
    assert "do-not-share" in kept.name and "regrade" in kept.read_text().lower()


def test_a_regrade_with_the_seed_file_repeats_every_verdict_and_hidden_case(runs):
    _, first, again, fresh = runs
    feedback = {s: f["02.row_major_index"] for s, (_, f) in first.items()}
    assert all("test case" in text and "expected" in text for text in feedback.values())
    assert again == first
    assert {s: f["02.row_major_index"] for s, (_, f) in fresh.items()} != feedback


@pytest.mark.parametrize("text", ["", "# only a comment\n", "zz\n", "00\n", "ab\ncd\n"])
def test_a_seed_file_that_is_not_one_is_refused(tmp_path, text):
    (tmp_path / "s.txt").write_text(text)
    with pytest.raises(ValueError, match="expected the file a grading run wrote"):
        secret.read(tmp_path / "s.txt")
