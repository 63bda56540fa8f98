"""Process trees: one that leaves its cgroup, starts a new session and keeps forking to change
its pid is still killed; trees started and killed from several threads at once never take each
other's processes; a grading run's end kills whatever was re-parented to it."""
import os
import subprocess
import sys
import threading
import time

import pytest

from gemmlab_grader import confine
from test_gemmlab_grader_isolate import processes_with

# Leaves every cgroup it can (as root it can), double-forks into a new session, then forks and
# exits in a loop for 4 s so that its pid keeps changing; if still alive after that, it writes
# the file named by argv[1] and sleeps.
HOPPER = r"""
import glob, os, sys, time
for procs in glob.glob("/sys/fs/cgroup/*/cgroup.procs") + ["/sys/fs/cgroup/cgroup.procs"]:
    try:
        with open(procs, "w") as f:
            f.write(str(os.getpid()))
    except OSError:
        pass
if os.fork():
    os._exit(0)
os.setsid()
end = time.time() + 4
while time.time() < end:
    if os.fork():
        os._exit(0)
    try:
        os.setsid()
    except OSError:
        pass
open(sys.argv[1], "w").write("survived")
time.sleep(60)
"""


@pytest.mark.parametrize("cgroups", [True, False])
def test_a_process_that_escapes_and_hops_pids_is_killed(tmp_path, monkeypatch, cgroups):
    if not cgroups:
        monkeypatch.setattr(confine, "_cgroup_bases", lambda: [])
    survived = tmp_path / "survived"
    marker = f"gemmlab-test-hopper-{os.getpid()}-{cgroups}"
    with confine.reaping():
        tree = confine.Tree([sys.executable, "-c", HOPPER, str(survived), marker], confine.Limits())
        time.sleep(1.5)
        tree.kill()
    time.sleep(4)                        # past its hopping: a survivor would write the file now
    assert not survived.exists() and not processes_with(marker)


def test_trees_in_several_threads_never_kill_each_others_processes():
    marker = f"gemmlab-test-threads-{os.getpid()}"
    trees, errors = {}, []

    def start(i):
        try:
            trees[i] = confine.Tree([sys.executable, "-c", "import time; time.sleep(60)",
                                     f"{marker}-{i}"], confine.Limits())
        except Exception as exc:  # noqa: BLE001 reported below
            errors.append(exc)

    with confine.reaping():
        threads = [threading.Thread(target=start, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors and len(trees) == 8
        killers = [threading.Thread(target=trees[i].kill) for i in range(4)]
        for t in killers:
            t.start()
        for t in killers:
            t.join()
        assert [trees[i].popen.poll() is None for i in range(8)] == [False] * 4 + [True] * 4
        for i in range(4, 8):
            trees[i].kill()
    assert not processes_with(marker)


def test_the_end_of_a_run_kills_what_was_reparented_to_it(tmp_path):
    marker = f"gemmlab-test-sweep-{os.getpid()}"
    said = tmp_path / "daemon"
    daemon = ("import os, sys, time\nif os.fork(): os._exit(0)\nos.setsid()\n"
              "if os.fork(): os._exit(0)\nopen(sys.argv[2], 'w').write(str(os.getpid()))\n"
              "time.sleep(60)")
    with confine.reaping():
        subprocess.run([sys.executable, "-c", daemon, marker, str(said)], check=True)
        deadline = time.monotonic() + 20
        while not processes_with(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        # (this failed twice in full runs, the daemon not found: say what became of it)
        assert processes_with(marker), _fate(said)
    assert not processes_with(marker)


def _fate(said):
    """What became of the process whose pid is in the file ``said``, in words."""
    if not said.exists() or not said.read_text():
        return "the daemon never wrote its pid"
    pid = said.read_text()
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
    except OSError:
        return f"the daemon (pid {pid}) is gone"
    return f"pid {pid}: state {fields[0]}, parent {fields[1]}, argv {argv[:4]}"
