"""Run JupyterLab for the browser tests exactly as a student gets it, and always stop it.

``running_lab`` starts ``make lab`` itself (``gemmlab lab``: same options, same fresh token, same
settings and kernel), only on a free port, with the virtual environment of the running
interpreter and a student folder of its own (``student/`` in the lab's folder), which is the
server's root: paths in the lab are relative to it, as a student's are. A few user settings are
set in a throw-away settings folder, because the tests need them:

* autosave off: running a lesson must never write outputs into the committed notebook;
* every cell kept in the page (no windowing), so every output can be checked;
* no news pop-up over the notebook.
"""
import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

TEST_SETTINGS = {
    "@jupyterlab/docmanager-extension/plugin": {"autosave": False},
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false",
                                                    "checkForUpdates": False},
}


@dataclass(frozen=True)
class Lab:
    """A running JupyterLab: where it listens, its token, the process group to stop, and its
    root (the student folder)."""
    port: int
    token: str
    pgid: int
    root: Path

    def url(self, path):
        """The address of ``path`` (relative to the root, or a file inside it) in the lab, with
        a fresh layout."""
        path = Path(path)
        relative = path.relative_to(self.root) if path.is_absolute() else path
        return f"http://127.0.0.1:{self.port}/lab/tree/{relative.as_posix()}?reset&token={self.token}"

    def api(self, method, path, body=None):
        """Call the server's REST API; returns the decoded JSON answer (None when empty)."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}/api/{path}", data=data,
                                         method=method,
                                         headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=30) as answer:
            text = answer.read()
        return json.loads(text) if text else None

    def shutdown_kernels(self):
        """Shut every kernel down (the lessons' kernels would otherwise share two cores)."""
        for kernel in self.api("GET", "kernels"):
            self.api("DELETE", f"kernels/{kernel['id']}")


def free_port():
    """A TCP port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_is_open(port):
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def group_is_alive(pgid):
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def lab_environment(workdir):
    """The environment for ``make lab``: the simulator backend, and the test settings."""
    settings = workdir / "settings"
    for plugin, values in TEST_SETTINGS.items():
        path = settings / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    env = dict(os.environ, JUPYTERLAB_SETTINGS_DIR=str(settings),
               JUPYTERLAB_WORKSPACES_DIR=str(workdir / "workspaces"))
    env.setdefault("GEMMLAB_BACKEND", "sim")
    env.pop("MPLBACKEND", None)     # the unit tests' Agg; a student's kernel draws inline
    for name in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL"):
        env.pop(name, None)         # `make lab` as typed in a shell, not as part of `make e2e`
    return env


def lab_command(port, work):
    """``make lab`` on ``port``, with the running interpreter's environment taken as it is, and
    the student folder ``work``."""
    venv = Path(sys.prefix)
    return ["make", "-s", "--no-print-directory", "lab", f"PORT={port}", f"VENV={venv}",
            f"WORK={work}", "-o", str(venv / ".installed-stamp"), "-o", str(venv / ".lab-stamp")]


def student_folder(workdir):
    """The student folder of a lab whose files go to ``workdir`` (never the repository's work/)."""
    return Path(workdir).resolve() / "student"


@contextlib.contextmanager
def running_lab(workdir, timeout=120):
    """Start JupyterLab (log in ``workdir/jupyterlab.log``), yield a :class:`Lab` once it
    answers, and stop it and its kernels on the way out, whatever happened inside."""
    workdir.mkdir(parents=True, exist_ok=True)
    log_path = workdir / "jupyterlab.log"
    port = free_port()
    with open(log_path, "w") as log:
        process = subprocess.Popen(lab_command(port, student_folder(workdir)), cwd=ROOT,
                                   env=lab_environment(workdir),
                                   stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    lab = None
    try:
        lab = Lab(port, _wait_until_serving(process, port, log_path, timeout), process.pid,
                  student_folder(workdir))
        yield lab
    finally:
        _stop(process, lab)


def _wait_until_serving(process, port, log_path, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"`make lab` exited with {process.returncode}:\n"
                               f"{log_path.read_text()[-3000:]}")
        found = re.search(r"token=([0-9a-f]+)", log_path.read_text())
        if found:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token="
                                       f"{found.group(1)}", timeout=5)
                return found.group(1)
            except (urllib.error.URLError, ConnectionError):
                pass
        time.sleep(0.3)
    raise RuntimeError(f"JupyterLab did not answer on port {port} within {timeout} s:\n"
                       f"{log_path.read_text()[-3000:]}")


def _stop(process, lab):
    """Kernels first (politely, through the API), then the server's whole process group."""
    if lab is not None:
        with contextlib.suppress(OSError, ValueError):
            lab.shutdown_kernels()
    for sig, grace in ((signal.SIGTERM, 20), (signal.SIGKILL, 10)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        deadline = time.monotonic() + grace
        while group_is_alive(process.pid) and time.monotonic() < deadline:
            process.poll()          # reap make, so that its group can empty
            time.sleep(0.2)
        if not group_is_alive(process.pid):
            break
    process.wait(timeout=10)
