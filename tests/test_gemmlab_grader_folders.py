"""Folders read, kept and removed without trusting their contents: deep trees, links, FIFOs,
folders replaced by files; the submissions' snapshot reads them once, before anything runs."""
import os

import pytest

from gemmlab_grader.folders import FolderSnapshot, Scan


def _deep(root, depth, name="d"):
    """``depth`` nested folders under ``root`` (a file at each level), made through descriptors:
    the path is far longer than PATH_MAX."""
    os.mkdir(root)
    fd = os.open(root, os.O_RDONLY)
    for i in range(depth):
        os.mkdir(name, dir_fd=fd)
        os.close(os.open(f"f{i}", os.O_WRONLY | os.O_CREAT, dir_fd=fd))
        sub = os.open(name, os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = sub
    os.close(fd)


def test_scan_stops_at_its_depth_and_count_and_never_follows_links(tmp_path):
    _deep(tmp_path / "tree", 50)
    os.symlink("/", tmp_path / "tree" / "root")
    scan = Scan(tmp_path / "tree", max_depth=5)
    found = [e.rel for e in scan]
    assert scan.truncated and max(r.count("/") for r in found) == 5
    assert "root" in found and not any(r.startswith("root/") for r in found)
    scan = Scan(tmp_path / "tree", max_entries=10)
    assert len(list(scan)) == 10 and scan.truncated
    with pytest.raises(OSError):
        list(Scan(tmp_path / "tree" / "root"))        # a link to a folder is not a folder


@pytest.fixture
def class_folder(tmp_path):
    root = tmp_path / "subs"
    (root / "alice").mkdir(parents=True)
    (root / "alice" / "01_x.ipynb").write_text("alice's work")
    (root / "alice" / "data").mkdir()
    (root / "alice" / "data" / "big.bin").write_bytes(b"\0" * 2000)
    (root / "bob").mkdir()
    (root / "bob" / "01_x.ipynb").write_text("bob's work")
    os.chmod(root / "bob" / "01_x.ipynb", 0o640)
    os.symlink("01_x.ipynb", root / "bob" / "latest.ipynb")
    return root


def test_only_the_notebooks_are_read_and_a_file_too_large_is_named_not_read(class_folder):
    snap = FolderSnapshot(class_folder, max_file=11)
    assert set(snap.entries) == {"alice/01_x.ipynb", "bob/01_x.ipynb", "bob/latest.ipynb"}
    assert snap.entries["bob/01_x.ipynb"].data == b"bob's work"
    assert snap.entries["alice/01_x.ipynb"][:3] == ("file", 12, None)
    found = snap.entries["alice/01_x.ipynb"]
    assert found.mtime == (class_folder / "alice" / "01_x.ipynb").stat().st_mtime  # which is newest


def test_fifos_and_links_are_recorded_never_opened(class_folder):
    os.mkfifo(class_folder / "alice" / "pipe.ipynb")
    snap = FolderSnapshot(class_folder)               # would block on opening the FIFO
    assert snap.entries["alice/pipe.ipynb"].kind == "other"
    assert snap.entries["bob/latest.ipynb"].kind == "link"
