"""A cgroup per process tree, so that the limits hold as root: a fork bomb stops at pids.max,
a memory hog filling its memory file system is stopped at the memory limit, and the group is
gone with the tree. Tight limits, so the shared machine survives a failure of the test."""
import os
import subprocess
import sys

import pytest

from gemmlab_grader import cgroups, sandbox
from test_gemmlab_grader_sandbox import WORKS_HERE

try:
    cgroups.make(1, 1 << 20).close()
    WHY_NOT = ""
except cgroups.Unavailable as exc:
    WHY_NOT = str(exc)
pytestmark = pytest.mark.skipif(bool(WHY_NOT), reason=f"no cgroup here: {WHY_NOT}")

# forks up to 300 children that sleep, however the limit fares: made, why it stopped, children
FORKS = """import os, signal, time
made, why, children = 0, 'none', []
for _ in range(300):
    try:
        pid = os.fork()
    except OSError as exc:
        why = type(exc).__name__
        break
    if pid == 0:
        time.sleep(120)
        os._exit(0)
    made += 1
    children.append(pid)
"""
BOMB = FORKS + "print(made, why, flush=True)\ntime.sleep(60)\n"

# writes its memory file system 1 MiB at a time, saying how far it got after each
HOG = """
import os, sys
block = b"x" * (1 << 20)
with open("/dev/shm/fill", "wb", buffering=0) as f:
    for i in range(1, 400):
        f.write(block)
        print(i, flush=True)
"""


def _run(argv, limits, first_line=False):
    """(its output: all, or the first line; the group's members then; the Tree), ended."""
    tree = sandbox.Tree(argv, limits, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        out = (tree.popen.stdout.readline() if first_line
               else tree.popen.communicate(timeout=60)[0])
        members = tree.group.members()
    finally:
        tree.kill()
    return out.decode(), members, tree


def test_a_fork_bomb_stops_at_the_groups_process_limit_and_dies_with_the_tree():
    out, members, tree = _run([sys.executable, "-c", BOMB],
                              sandbox.Limits(processes=20, memory_bytes=1 << 30), first_line=True)
    made, why = out.split()
    assert why == "BlockingIOError" and int(made) < 20       # fork failed: EAGAIN at pids.max
    assert len(members) == int(made) + 1                     # all of them in the group
    assert not any(os.path.exists(f"/proc/{pid}") and open(f"/proc/{pid}/stat").read().split()[2]
                   != "Z" for pid in members)                # killed with the tree
    assert tree.group.folders == []                          # and the group removed


@pytest.mark.skipif(not WORKS_HERE, reason="bubblewrap is not installed")
def test_a_memory_hog_in_its_memory_file_system_is_stopped_at_the_memory_limit(tmp_path):
    # the sandbox's /dev/shm may hold 512 MiB; the group allows 96 MiB, tmpfs pages counted
    argv = sandbox.command([sys.executable, "-c", HOG], tmp_path, memory_bytes=1 << 30)
    out, _, tree = _run(argv, sandbox.Limits(processes=20, memory_bytes=96 << 20))
    written = int(out.split()[-1]) if out.split() else 0
    assert written < 96, written
    assert tree.popen.returncode != 0


@pytest.mark.skipif(not WORKS_HERE, reason="bubblewrap is not installed")
def test_the_two_memory_file_systems_add_up_to_the_memory_limit(tmp_path):
    argv = sandbox.command(["/bin/df", "-B1", "/dev/shm", str(tmp_path)], tmp_path,
                           memory_bytes=256 << 20)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    sizes = [int(line.split()[1]) for line in done.stdout.splitlines()[1:]]
    assert sum(sizes) == 256 << 20, done.stdout
