"""Limits that hold as root where no cgroup can be made (issue 55, item 7): the sandbox's command
runs as a user of its own (sandbox.own_user), whom RLIMIT_NPROC binds as it binds no root, and
its two memory file systems hold --memory together. A fork bomb and a memory hog in one
student's notebook, graded as root with "no cgroup" (sandbox._no_cgroup answering why, as on a
host without a writable cgroup hierarchy): the bomb stops at --processes, the hog's files at
--memory, the classmates keep their marks, and no process of the sandbox's users is left.
Tight limits throughout, so that the shared machine survives a failure of the test."""
import json
import os
import re

import pytest

from gemmlab_grader import grade, sandbox
from test_gemmlab_grader_cgroups_class import write_class
from test_gemmlab_grader_sandbox import WORKS_HERE

pytestmark = [pytest.mark.skipif(os.geteuid() != 0, reason="about grading as root"),
              pytest.mark.skipif(not WORKS_HERE, reason="bubblewrap is not installed")]

PROCESSES, MEMORY_MIB = 32, 1024



def _sandbox_users():
    """The process ids of processes run by the sandboxes' own users."""
    found = []
    for entry in os.scandir("/proc"):
        try:
            if entry.name.isdigit() and entry.stat().st_uid in sandbox.OWN_USERS:
                found.append(int(entry.name))
        except OSError:
            pass
    return found


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("bombs")
    write_class(root)
    patch = pytest.MonkeyPatch()
    patch.setattr(sandbox, "_no_cgroup", lambda: "simulated: no cgroup hierarchy is writable")
    before = _sandbox_users()
    try:
        status = grade.main(root / "subs", out=root / "out", timeout=60, memory_mib=MEMORY_MIB,
                            processes=PROCESSES, jobs=2, seed=1)
        protections = sandbox.containment(sandbox.Limits(processes=PROCESSES))
    finally:
        patch.undo()
    assert status == 0
    rows = json.loads((root / "out" / "grades.json").read_text())["notebooks"]
    return {r["student"]: r for r in rows}, protections, before, _sandbox_users()


def test_the_protections_say_how_processes_and_memory_are_bounded(graded):
    said = graded[1]
    assert said.startswith("no cgroup (simulated")
    assert f"at most {PROCESSES} in a sandbox, which runs as a user of its own" in said


def test_the_fork_bomb_stops_at_the_process_limit_as_root(graded):
    notes = " ".join(graded[0]["attacker"]["notes"])
    made = re.search(r"made (\d+) (\w*)", notes)
    assert made, notes
    assert made[2] == "BlockingIOError" and int(made[1]) < PROCESSES


def test_the_memory_hogs_files_hold_at_most_the_memory_limit_together(graded):
    notes = " ".join(graded[0]["attacker"]["notes"])
    held = re.search(r"held (\d+) MiB in files and (\d+) MiB of memory", notes)
    assert held, notes
    assert int(held[1]) <= MEMORY_MIB and int(held[2]) < MEMORY_MIB


def test_the_classmates_keep_their_marks(graded):
    for honest in ("honest1", "honest2"):
        row = graded[0][honest]
        assert row["results"]["01.weights_gib"] == "pass" and row["notes"] == [], row


def test_no_process_of_the_sandboxes_users_is_left(graded):
    before, after = graded[2], graded[3]
    assert before == [] and after == []
