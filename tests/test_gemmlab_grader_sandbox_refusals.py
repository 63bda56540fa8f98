"""The one boundary: untrusted notebooks are graded only in bubblewrap. Where it is missing or
cannot start, `gemmlab grade` refuses before anything runs, says why and how to get it;
`--no-sandbox` is an error pointing at `--trusted`."""
import os
import subprocess
import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

ROOT = Path(__file__).resolve().parent.parent


def _cli(tmp_path, *args, path=None):
    sub = tmp_path / "subs" / "alice"
    sub.mkdir(parents=True, exist_ok=True)
    nbformat.write(new_notebook(cells=[new_code_cell("import os; os.system('touch pwned')")]),
                   sub / "01_x.ipynb")
    env = dict(os.environ, GEMMLAB_BACKEND="sim",      # the checkout first, then what was there
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    if path is not None:
        env["PATH"] = path
    return subprocess.run([sys.executable, "-m", "gemmlab_grader", "subs", "--out", "out", *args],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)


def _refused(done, tmp_path, why):
    assert done.returncode == 2, done.stderr
    assert why in done.stderr and "refusing to grade" in done.stderr
    for way in ("apt install bubblewrap", "dnf install bubblewrap",
                "kernel.unprivileged_userns_clone=1", "user.max_user_namespaces",
                "kernel.apparmor_restrict_unprivileged_userns=0", "WSL2", "macOS", "--trusted"):
        assert way in done.stderr, way
    assert not (tmp_path / "out").exists() and not list(tmp_path.rglob("pwned"))


def test_without_bubblewrap_on_path_grading_is_refused_with_how_to_get_it(tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    _refused(_cli(tmp_path, path=str(empty)), tmp_path, "bubblewrap (bwrap) is not installed")


def test_a_bubblewrap_that_cannot_start_is_refused_with_its_reason(tmp_path):
    fake = tmp_path / "bin"
    fake.mkdir()
    stand_in = fake / "bwrap"
    stand_in.write_text("#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\n"
                        "exit 1\n")
    stand_in.chmod(0o755)
    done = _cli(tmp_path, path=f"{fake}:{os.environ['PATH']}")
    _refused(done, tmp_path, "cannot start a sandbox here")
    assert "No permissions to creating new namespace" in done.stderr


def test_no_sandbox_is_an_error_that_points_at_trusted(tmp_path):
    for args in (["--no-sandbox"], ["--no-sandbox", "--no-sandbox"]):
        done = _cli(tmp_path, *args)
        assert done.returncode == 2 and "--trusted" in done.stderr.splitlines()[-1]
        assert not (tmp_path / "out").exists() and not list(tmp_path.rglob("pwned"))
