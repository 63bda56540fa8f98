"""A fork bomb and a memory hog in one student's notebook, graded as root with a class: each
notebook's cgroup stops them at --processes and --memory (its memory file systems counted), the
classmates keep their marks, and the machine keeps its process ids. Tight limits throughout, so
that the shared machine survives a failure of the test."""
import json
import re

import pytest

from test_gemmlab_grader_cgroups import FORKS, WHY_NOT
from test_gemmlab_grader_grade import _cli, _write
from test_gemmlab_grader_sandbox import WORKS_HERE

pytestmark = [pytest.mark.skipif(bool(WHY_NOT), reason=f"no cgroup here: {WHY_NOT}"),
              pytest.mark.skipif(not WORKS_HERE, reason="bubblewrap is not installed")]

RIGHT = "weights_gib = 7e9 * 2 / 2**30"
# the fork bomb says how many children it made, after ending them (so that the next cell, the
# hog, has process ids to run with)
BOMB = FORKS + """for pid in children:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
raise RuntimeError(f'made {made} {why}')"""
# fills both of its memory file systems, then holds memory of its own; says how far it got
HOG = """files, heap, blocks = 0, 0, []
for place in ('/dev/shm/fill', 'fill'):
    try:
        with open(place, 'wb', buffering=0) as f:
            for _ in range(700):
                f.write(b'x' * (1 << 20))
                files += 1
    except OSError:
        pass
try:
    for _ in range(1200):
        blocks.append(bytearray(1 << 20))
        heap += 1
except MemoryError:
    pass
raise RuntimeError(f'held {files} MiB in files and {heap} MiB of memory')"""


def write_class(root):
    """``root/subs``: the attacker's notebook (the bomb, the hog, a right answer) and two
    classmates' (the right answer)."""
    _write(root / "subs" / "attacker" / "01_numbers_and_precision.ipynb", BOMB, HOG, RIGHT)
    for honest in ("honest1", "honest2"):
        _write(root / "subs" / honest / "01_numbers_and_precision.ipynb", RIGHT)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("bombs")
    write_class(root)
    done = _cli("subs", "--out", "out", "--timeout", "60", "--processes", "32", "--memory",
                "1024", "--jobs", "2", cwd=root)
    assert done.returncode == 0, done.stderr
    rows = json.loads((root / "out" / "grades.json").read_text())["notebooks"]
    return {r["student"]: r for r in rows}, done


def test_the_protections_say_each_notebook_has_a_cgroup(graded):
    assert "a cgroup per notebook and per code worker: at most 32 processes, 1024 MiB" in \
        graded[1].stderr


def test_the_fork_bomb_stops_at_the_process_limit(graded):
    notes = " ".join(graded[0]["attacker"]["notes"])
    made = re.search(r"made (\d+) (\w*)", notes)
    assert made, notes
    assert made[2] == "BlockingIOError" and int(made[1]) < 32


def test_the_memory_hog_holds_less_than_the_memory_limit_or_is_killed(graded):
    notes = " ".join(graded[0]["attacker"]["notes"])
    held = re.search(r"held (\d+) MiB in files and (\d+) MiB of memory", notes)
    assert (held and int(held[1]) + int(held[2]) < 1024) or "kernel" in notes.lower(), notes


def test_the_classmates_keep_their_marks(graded):
    for honest in ("honest1", "honest2"):
        row = graded[0][honest]
        assert row["results"]["01.weights_gib"] == "pass" and row["notes"] == [], row
