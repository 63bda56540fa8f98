"""Folders read, kept and removed without trusting their contents: deep trees, links, FIFOs,
folders replaced by files; a snapshot puts back what a notebook changed and moves aside, never
deletes, what took its place."""
import os
import stat
import sys

import pytest

from gemmlab_grader import folders
from gemmlab_grader.folders import ASIDE, FolderSnapshot, Scan, remove_tree


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


def test_a_tree_of_3000_folders_is_removed_where_shutil_recurses_too_deep(tmp_path):
    _deep(tmp_path / "tree", 3000)
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)          # what an unmodified interpreter has
    try:
        remove_tree(tmp_path / "tree")
    finally:
        sys.setrecursionlimit(old)
    assert not (tmp_path / "tree").exists()


def test_remove_tree_removes_unreadable_folders_files_and_links_but_not_their_targets(tmp_path):
    keep = tmp_path / "keep.txt"
    keep.write_text("precious")
    tree = tmp_path / "tree"
    (tree / "locked" / "inner").mkdir(parents=True)
    (tree / "locked" / "inner" / "x").write_text("x")
    os.symlink(keep, tree / "link")
    os.symlink(tmp_path, tree / "locked" / "dirlink")
    os.mkfifo(tree / "fifo")
    os.chmod(tree / "locked" / "inner", 0)
    os.chmod(tree / "locked", 0o500)
    remove_tree(tree)
    assert not tree.exists() and keep.read_text() == "precious"
    remove_tree(tree)                    # gone already: fine
    (tmp_path / "file").write_text("x")
    remove_tree(tmp_path / "file")
    assert not (tmp_path / "file").exists()


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


def test_a_deleted_folder_comes_back_with_its_files(class_folder):
    snap = FolderSnapshot(class_folder)
    remove_tree(class_folder / "alice")
    restored, planted, problems = snap.restore()
    assert restored == ["alice/ (a deleted folder)", "alice/01_x.ipynb (deleted)",
                        "alice/data/ (a deleted folder)", "alice/data/big.bin (deleted)"]
    assert (class_folder / "alice" / "01_x.ipynb").read_text() == "alice's work"
    assert not planted and not problems
    assert snap.restore() == ([], [], [])


def test_what_replaced_a_folder_or_file_is_moved_aside_not_deleted(class_folder):
    snap = FolderSnapshot(class_folder)
    remove_tree(class_folder / "alice")
    (class_folder / "alice").write_text("a file where a folder was")
    (class_folder / "bob" / "01_x.ipynb").unlink()
    (class_folder / "bob" / "01_x.ipynb").mkdir()
    (class_folder / "bob" / "latest.ipynb").unlink()
    os.symlink("/etc/passwd", class_folder / "bob" / "latest.ipynb")
    restored, planted, problems = snap.restore()
    assert "alice/ (a folder replaced)" in restored and "bob/01_x.ipynb (changed)" in restored
    assert "bob/latest.ipynb (a link changed)" in restored and not problems
    assert (class_folder / f"alice{ASIDE}").read_text() == "a file where a folder was"
    assert (class_folder / "bob" / f"01_x.ipynb{ASIDE}").is_dir()
    assert (class_folder / "bob" / "01_x.ipynb").read_text() == "bob's work"
    assert stat.S_IMODE(os.stat(class_folder / "bob" / "01_x.ipynb").st_mode) == 0o640
    assert os.readlink(class_folder / "bob" / "latest.ipynb") == "01_x.ipynb"
    assert planted == []                     # what was moved aside is reported as restored


def test_the_folder_itself_replaced_by_a_file_comes_back(class_folder):
    snap = FolderSnapshot(class_folder)
    remove_tree(class_folder)
    class_folder.write_text("gone")
    restored, _planted, _problems = snap.restore()
    assert restored[0] == ". (the folder itself)"
    assert (class_folder / "bob" / "01_x.ipynb").read_text() == "bob's work"
    assert (class_folder.parent / f"subs{ASIDE}").read_text() == "gone"


def test_planted_files_are_listed_by_the_top_of_their_tree_and_left(class_folder):
    snap = FolderSnapshot(class_folder)
    _deep(class_folder / "deep", 3000)
    (class_folder / "alice" / "planted.txt").write_text("x")
    try:
        restored, planted, problems = snap.restore()
        assert (restored, planted, problems) == ([], ["alice/planted.txt", "deep"], [])
        assert (class_folder / "alice" / "planted.txt").exists()
    finally:
        remove_tree(class_folder / "deep")   # pytest's own clean-up recurses: 3000 is too deep


def test_a_file_too_large_to_keep_is_known_by_its_stat_and_not_restored(class_folder):
    snap = FolderSnapshot(class_folder, max_file=1000)
    assert snap.unsaved == ["alice/data/big.bin"]
    (class_folder / "alice" / "data" / "big.bin").write_bytes(b"changed")
    restored, _planted, problems = snap.restore()
    assert restored == [] and "too large to have been kept" in problems[0]


def test_the_total_budget_spares_the_files_always_kept(class_folder):
    snap = FolderSnapshot(class_folder, max_total=10, always=lambda rel: rel.endswith(".ipynb"))
    assert snap.entries["alice/01_x.ipynb"].data == b"alice's work"
    assert snap.unsaved == ["alice/data/big.bin"]


def test_fifos_and_links_are_recorded_never_opened(class_folder):
    os.mkfifo(class_folder / "alice" / "pipe.ipynb")
    snap = FolderSnapshot(class_folder)               # would block on opening the FIFO
    assert snap.entries["alice/pipe.ipynb"].kind == "other"
    assert snap.entries["bob/latest.ipynb"].kind == "link"
    assert folders.listing(class_folder)["bob/latest.ipynb"] == "link"
