"""The JupyterLab the suite starts is stopped, with its kernels, even when a test fails."""
from pathlib import Path

import pytest

from .lab import group_is_alive, port_is_open, running_lab


def processes_mentioning(text):
    """Process ids whose command line contains ``text`` (a kernel's id is in its command line)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if text in cmdline.read_bytes().decode(errors="replace"):
                found.append(int(cmdline.parent.name))
        except OSError:
            pass                    # the process ended while we looked
    return found


def test_lab_and_its_kernels_stop_even_when_the_test_fails(tmp_path):
    started = {}
    with pytest.raises(RuntimeError, match="a failing test"):
        with running_lab(tmp_path) as lab:
            started["lab"] = lab
            started["kernel"] = lab.api("POST", "kernels", {"name": "python3"})["id"]
            assert processes_mentioning(started["kernel"])
            raise RuntimeError("a failing test")
    lab = started["lab"]
    assert not port_is_open(lab.port)
    assert not group_is_alive(lab.pgid)
    assert not processes_mentioning(started["kernel"])
