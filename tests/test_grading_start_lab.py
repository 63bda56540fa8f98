"""`gemmlab lab DIR`: one command makes the student folder (never over the student's files) and
serves it with DIR as JupyterLab's root, the course's settings and the course's kernel, from any
folder (as an installed wheel is used); the address it prints opens lesson 00. Checked as a
student meets it: the command run, then the server asked what the browser would get."""
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request

import pytest

from gemmlab import course
from gemmlab.grading import start_lab


def _get(port, token, path, parse=json.loads):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/{path}?token={token}", timeout=10) as r:
        return parse(r.read())


def _serving(process, log, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert process.poll() is None, log.read_text()
        found = re.search(r"Open: http://localhost:(\d+)/lab/tree/(\S+)\?token=([0-9a-f]+)",
                          log.read_text())
        if found:
            try:
                _get(found[1], found[3], "api/status")
                return found[1], found[2], found[3]
            except OSError:
                pass
        time.sleep(0.5)
    raise AssertionError(log.read_text())


def test_gemmlab_lab_serves_the_student_folder_with_the_course_settings(tmp_path):
    pytest.importorskip("jupyterlab", reason="JupyterLab is not installed here (the lab extra)")
    from tests.e2e.lab import free_port
    mine = tmp_path / "mine" / "exercises" / "00_start_here_exercises.ipynb"
    mine.parent.mkdir(parents=True)
    mine.write_text("my answers")
    before = mine.parent / "05_tiled_gemm.ipynb"     # lesson 05's exercises, from a folder of old
    before.write_text("my answers to 05")
    log = tmp_path / "lab.log"
    env = {k: v for k, v in os.environ.items() if k not in ("JUPYTER_TOKEN", "DISPLAY")}
    with open(log, "w") as out:
        process = subprocess.Popen([sys.executable, "-m", "gemmlab", "lab", "mine",
                                    f"--port={free_port()}", "--no-browser"], cwd=tmp_path,
                                   env=env, stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    try:
        port, opened, token = _serving(process, log)
        root = {item["name"] for item in _get(port, token, "api/contents")["content"]}
        assert {"notebooks", "exercises", "docs"} <= root        # DIR is the server's root
        assert opened == "notebooks/00_start_here.ipynb"
        assert _get(port, token, f"api/contents/{opened}")["type"] == "notebook"
        news = _get(port, token, "lab/api/settings/@jupyterlab/apputils-extension:notification")
        assert news["schema"]["properties"]["fetchNews"]["default"] == "false"
        kernel = _get(port, token, "api/kernelspecs")["kernelspecs"]["python3"]["spec"]
        assert "--ext=gemmlab.kernel_start" in kernel["argv"]
        # No build check: JupyterLab from PyPI is prebuilt, and where Node.js is installed each
        # page load's check runs node twice (yarn's config, the version check) for nothing.
        page = _get(port, token, "lab", parse=bytes.decode)
        config = json.loads(re.search(r'id="jupyter-config-data"[^>]*>(.*?)</script>', page,
                                      re.S).group(1))
        assert config["buildCheck"] is False and config["buildAvailable"] is False
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
    assert mine.read_text() == "my answers"                     # never overwritten
    assert before.read_text() == "my answers to 05"             # theirs, under the former name
    assert not (mine.parent / "05_tiled_gemm_exercises.ipynb").exists()     # no blank beside it
    text = log.read_text()
    assert "under their former names stay yours, as they are: 05_tiled_gemm.ipynb in " \
        "mine/exercises/" in text
    assert text.count("Your student folder is mine/") == 1
    assert "jupyter lab" not in text                             # it starts it: no such advice
    assert f"--IdentityProvider.token={token}" not in text and token not in " ".join(
        start_lab.command(tmp_path, 1, False))                   # the token stays off argv


def test_the_environment_puts_the_course_settings_first():
    env = start_lab.environment({"JUPYTER_PATH": "/mine", "PATH": "/bin"}, "/course/jupyter", "t")
    assert env["JUPYTER_PATH"] == os.pathsep.join(["/course/jupyter", "/mine"])
    assert env["JUPYTER_CONFIG_PATH"] == "/course/jupyter"
    assert env["JUPYTER_TOKEN"] == "t" and env["PATH"] == "/bin"


def test_the_settings_ship_with_the_course():
    settings = course.jupyter_settings()
    overrides = json.loads((settings / "labconfig" / "default_setting_overrides.json").read_text())
    assert overrides["@jupyterlab/apputils-extension:notification"]["fetchNews"] == "false"
    assert "jupyter/**/*.json" in (course.CHECKOUT / "setup.py").read_text()   # into the wheel


def test_help_readme_and_install_notes_say_the_same_thing():
    """`gemmlab --help`, the README and docs/install.md: `gemmlab lab DIR` starts the lab, the
    lessons go to DIR/notebooks (never DIR/lessons), and no step says to run `jupyter lab` on a
    lesson (that makes the lesson's folder the root)."""
    import subprocess
    import sys
    shown = subprocess.run([sys.executable, "-m", "gemmlab", "--help"], capture_output=True,
                           text=True, timeout=120).stdout
    shown = " ".join(shown.split())
    assert "lab" in shown and "DIR/notebooks/" in shown and "DIR/lessons" not in shown
    for name in ("README.md", "docs/install.md"):
        text = " ".join((course.CHECKOUT / name).read_text().split())
        assert "gemmlab lab DIR" in text and "DIR/notebooks/" in text, name
        assert "DIR/lessons" not in text and "then `jupyter lab" not in text, name
