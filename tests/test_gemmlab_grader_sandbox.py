"""The sandbox: a read-only root and /dev, a work folder and a /dev/shm of its own, each an empty
memory file system (the two together capped at the memory limit), gone when it ends."""
import os
import subprocess
import sys

import pytest

from gemmlab_grader import sandbox

WORKS_HERE = sandbox.bwrap() is not None
pytestmark = pytest.mark.skipif(not WORKS_HERE, reason="bubblewrap is not installed")
# What a grading run in a test adds to its command line: nothing where the sandbox works; where
# it does not (a GPU image without bubblewrap), --trusted (the tests' notebooks are ours). Tests
# about what grading does, not about the sandbox, then still run there.
WHERE_IT_WORKS = [] if WORKS_HERE else ["--trusted"]

PROBE = r"""
import json, os, sys
found = {}
for target in ("/probe", "/dev/probe", "/usr/probe", "/tmp/probe"):
    try:
        open(target, "w").close()
        found[target] = "written"
    except OSError as exc:
        found[target] = exc.strerror
for folder in (os.getcwd(), "/dev/shm"):
    written = 0
    try:
        with open(os.path.join(folder, "fill"), "wb") as f:
            for _ in range(64):
                f.write(b"\0" * (1 << 20))
                f.flush()
                written += 1
    except OSError as exc:
        found[folder + " stopped"] = exc.strerror
    found[folder] = written
print(json.dumps(found))
"""


def _run(tmp_path, code, memory=16 << 20):
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    argv = sandbox.command([sys.executable, "-c", code], work, memory_bytes=memory)
    return subprocess.run(argv, cwd=work, capture_output=True, text=True, timeout=120)


def test_only_the_work_folder_and_dev_shm_are_writable_and_both_are_capped(tmp_path):
    import json
    done = _run(tmp_path, PROBE)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert all(found[t] != "written" for t in ("/probe", "/dev/probe", "/usr/probe", "/tmp/probe"))
    work = str(tmp_path / "work")
    # the two share the memory limit, 8 MiB each
    assert found[work] == 8 and found[work + " stopped"] == "No space left on device"
    assert found["/dev/shm"] == 8 and found["/dev/shm stopped"] == "No space left on device"


def test_nothing_written_inside_reaches_the_machine(tmp_path):
    marker = f"gemmlab-sandbox-{os.getpid()}"
    done = _run(tmp_path, f"open('/dev/shm/{marker}', 'w').write('x')\n"
                          f"open('{marker}', 'w').write('x')\n")
    assert done.returncode == 0, done.stderr
    assert not os.path.exists(f"/dev/shm/{marker}")
    assert os.listdir(tmp_path / "work") == []
