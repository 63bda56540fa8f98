"""``gemmlab lab [DIR]`` (``make lab`` runs it): the student's JupyterLab, one command for a
checkout and for an installed wheel.

It makes or completes the student folder ``DIR`` as ``gemmlab work`` does (never over a file that
is there), then becomes JupyterLab (exec: Ctrl-C and signals reach it alone) with ``DIR`` as the
server's root, so that every link between lessons, exercises and the glossary resolves and the
file browser reaches them all, opening ``DIR/notebooks/00_start_here.ipynb``. The course's Jupyter
folder (:func:`gemmlab.course.jupyter_settings`) comes first on ``JUPYTER_CONFIG_PATH`` (its
``labconfig/``: no news pop-up, and no build check, which runs Node.js on each page load
where it is installed) and on ``JUPYTER_PATH`` (its ``kernels/python3``: the kernel
loads :mod:`gemmlab.kernel_start`).

The access token goes to JupyterLab through its environment (``JUPYTER_TOKEN``), which only the
user can read, not on its command line, which every local user sees in ``ps``. Kernels talk to
the server over Unix sockets in Jupyter's private runtime folder (the IPC transport), not over TCP
ports on localhost that any local user could connect to.
"""
import importlib.util
import os
import secrets
import sys
from pathlib import Path

from .. import course, platforms
from .handout import FIRST_LESSON, work_main


def _prepended(value, earlier):
    return os.pathsep.join([str(value), *([earlier] if earlier else [])])


def environment(base, settings, token):
    """``base`` (a mapping of the environment) with the course's Jupyter folder ``settings``
    first on both Jupyter paths, and the token."""
    env = dict(base)
    env["JUPYTER_CONFIG_PATH"] = _prepended(settings, base.get("JUPYTER_CONFIG_PATH"))
    env["JUPYTER_PATH"] = _prepended(settings, base.get("JUPYTER_PATH"))
    env["JUPYTER_TOKEN"] = token
    return env


def command(work, port, browser):
    """JupyterLab's command line for the student folder ``work`` (an absolute path)."""
    argv = [sys.executable, "-m", "jupyterlab", str(work / FIRST_LESSON),
            f"--ServerApp.root_dir={work}", f"--port={port}", "--ServerApp.port_retries=0"]
    if platforms.POSIX:                     # Unix sockets; Windows keeps TCP on localhost
        argv.append("--KernelManager.transport=ipc")
    if not browser:
        argv.append("--no-browser")
    if platforms.POSIX and os.geteuid() == 0:
        argv.append("--allow-root")
    return argv


def has_display():
    """Whether a browser can open here (a desktop session, or macOS)."""
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")) \
        or sys.platform == "darwin"


def main(work="work", port=8888, browser=None):
    """Make the student folder ``work``, say where to open it, and become JupyterLab."""
    try:
        settings = course.jupyter_settings()
    except FileNotFoundError as exc:
        print(f"gemmlab lab: {exc}", file=sys.stderr)
        return 2
    if importlib.util.find_spec("jupyterlab") is None:
        print("gemmlab lab: JupyterLab is not installed here (the lean install leaves it out): "
              "pip install 'gemmlab[lab]'", file=sys.stderr)
        return 2
    status = work_main(None, work, next_step=False)
    if status:
        return status
    folder = Path(work).resolve()
    token = os.environ.get("JUPYTER_TOKEN") or secrets.token_hex(16)
    print(f"\n  Open: http://localhost:{port}/lab/tree/{FIRST_LESSON}?token={token}\n"
          f"  (JupyterLab is starting, with {folder} as its root; Ctrl-C stops it.)\n", flush=True)
    sys.stderr.flush()
    argv = command(folder, port, has_display() if browser is None else browser)
    os.execve(sys.executable, argv, environment(os.environ, settings, token))
