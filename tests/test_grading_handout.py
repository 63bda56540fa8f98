"""`make lab`: the token stays off the command line (other users see that in `ps`) but the URL
is printed, and a student's notebooks in work/ survive it."""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(shutil.which("make") is None, reason="needs make")]


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _status(port, token):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token={token}",
                                    timeout=5) as reply:
            return reply.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except (urllib.error.URLError, ConnectionError):
        return None


def _session(sid):
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                if int(f.read().rsplit(")", 1)[1].split()[3]) == sid:
                    yield int(pid)
        except (OSError, IndexError, ValueError):
            pass


@pytest.fixture
def course(tmp_path):
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
    for folder in ("notebooks", "exercises"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "01_numbers_and_precision.ipynb").write_text("my answers")
    return tmp_path


def test_make_lab_keeps_the_token_off_the_command_line_and_the_students_work(course):
    port, venv = _free_port(), Path(sys.prefix)
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    lab = subprocess.Popen(["make", "-s", "--no-print-directory", "lab", f"PORT={port}",
                            f"VENV={venv}", "-o", str(venv / ".installed-stamp")],
                           cwd=course, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        printed, token = "", None
        deadline = time.monotonic() + 120
        while token is None and time.monotonic() < deadline:
            printed += lab.stdout.readline()
            found = re.search(r"Open: http://localhost:\d+/lab/tree/\S+\?token=([0-9a-f]{32})",
                              printed)
            token = found and found.group(1)
        assert token, printed
        while _status(port, token) != 200 and time.monotonic() < deadline:
            time.sleep(0.3)
        assert _status(port, token) == 200
        assert _status(port, "0" * 32) == 403
        processes = list(_session(lab.pid))
        command_lines = [Path(f"/proc/{pid}/cmdline").read_bytes() for pid in processes]
        assert any(b"jupyter" in c for c in command_lines)
        assert not any(token.encode() in c for c in command_lines)
        assert (course / "work" / "01_numbers_and_precision.ipynb").read_text() == "my answers"
        assert len(list((course / "work").glob("[0-9][0-9]_*.ipynb"))) == \
            len(list((course / "exercises").glob("[0-9][0-9]_*.ipynb")))
    finally:
        os.killpg(lab.pid, signal.SIGTERM)
        try:
            lab.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(lab.pid, signal.SIGKILL)
            lab.wait()
