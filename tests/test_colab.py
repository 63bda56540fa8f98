"""Colab: the decision logic of the set-up cell on faked environments (driver, CuPy preinstalled,
modules already imported), the cell doing nothing elsewhere, and every notebook carrying the link
and the cell. tests/test_course.py runs the same cell in a fresh venv with the built wheel."""
import importlib.metadata
import os
import re
import shutil
import sys
import types
from pathlib import Path

import nbformat
import pytest

from gemmlab import colab

ROOT = Path(__file__).resolve().parent.parent
try:
    importlib.metadata.requires("gemmlab")
    NOT_INSTALLED = ""
except importlib.metadata.PackageNotFoundError:
    NOT_INSTALLED = ("gemmlab runs from a source tree here, not installed: it has no package "
                     "metadata to read (pip install -e . needs the build backend from PyPI, "
                     "which an offline machine such as the GPU one cannot reach)")
# The tests of the installed package's own metadata skip where it is not installed, except in CI,
# which installs it: a skip there would hide a missing install step.
needs_installed = pytest.mark.skipif(bool(NOT_INSTALLED) and not os.environ.get("CI"),
                                     reason=NOT_INSTALLED)
REQUIRES = ['numpy<2.5,>=1.24', 'cupy-cuda12x>=13; extra == "cuda12"',
            'nvidia-nccl-cu12>=2.18; extra == "cuda12"', 'numba-cuda[cu12]>=0.20; extra == "cuda12"',
            'cupy-cuda13x>=14; extra == "cuda13"', 'mpi4py>=4; extra == "mpi"']


def test_a_cuda12_driver_gets_the_cuda12_stack_and_a_conflicting_cupy_goes():
    todo = colab.plan((12, 4), {"cupy-cuda13x": "14.0"}, REQUIRES)
    assert todo.commands == [["uninstall", "-y", "-q", "cupy-cuda13x"],
                             ["install", "-q", "cupy-cuda12x>=13", "nvidia-nccl-cu12>=2.18",
                              "numba-cuda[cu12]>=0.20"]]


def test_a_cuda13_driver_replaces_colabs_cuda12_cupy():
    todo = colab.plan((13, 0), {"cupy-cuda12x": "13.3"}, REQUIRES)
    assert todo.commands[0] == ["uninstall", "-y", "-q", "cupy-cuda12x"]
    assert todo.commands[1] == ["install", "-q", "cupy-cuda13x>=14"]


def test_the_right_cupy_already_there_is_kept():
    todo = colab.plan((12, 2), {"cupy-cuda12x": "13.3"}, REQUIRES)
    assert [c[0] for c in todo.commands] == ["install"]


def test_a_cpu_runtime_or_an_old_driver_installs_nothing_and_says_why():
    assert colab.plan(None, {}, REQUIRES).commands == []
    assert "simulator" in colab.plan(None, {}, REQUIRES).notes[0]
    old = colab.plan((11, 8), {}, REQUIRES)
    assert old.commands == [] and "12 or newer" in old.notes[0]


def test_a_package_without_the_extra_is_an_error_that_names_the_fix():
    with pytest.raises(RuntimeError, match="no 'cuda12' extra"):
        colab.plan((12, 4), {}, ["numpy"])


@needs_installed
def test_the_installed_package_declares_both_stacks():
    for extra, cupy in (("cuda12", "cupy-cuda12x"), ("cuda13", "cupy-cuda13x")):
        assert any(r.startswith(cupy) for r in colab.extra_requirements(extra))


def test_restart_when_an_imported_module_changed_or_cupy_was_loaded():
    fake = {"numpy": types.SimpleNamespace(__version__="1.26.4")}
    before = colab.loaded_versions(fake)
    assert colab.restart_needed(before, lambda dist: "2.4.6")
    assert not colab.restart_needed(before, lambda dist: "1.26.4")
    assert colab.restart_needed(colab.loaded_versions({"cupy": object()}), lambda d: "x")


@needs_installed
def test_setup_does_nothing_off_colab_and_runs_the_plan_on_it(capsys):
    ran = []
    assert colab.setup(run=ran.append, modules={}) is None and ran == []
    todo = colab.setup(run=ran.append, modules={"google.colab": object()}, driver=(12, 4), cupy={})
    assert ran == todo.commands and ran[-1][0] == "install"
    assert "cuda12" in capsys.readouterr().out


def test_the_cell_is_a_no_op_off_colab():
    assert "google.colab" not in sys.modules
    namespace = {}
    exec(colab.SETUP_CELL, namespace)                  # nothing installed, nothing imported
    assert "gemmlab" not in namespace


NOTEBOOKS = sorted(p for d in ("notebooks", "solutions", "exercises") for p in (ROOT / d).glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_notebook_opens_in_colab_and_starts_with_the_setup_cell(path):
    nb = nbformat.read(path, as_version=4)
    first, second = nb.cells[:2]
    opened = path.relative_to(ROOT).as_posix().replace("solutions/", "exercises/")
    assert first.id == colab.LINK_ID and colab.link(opened) in first.source
    assert second.id == colab.CELL_ID and second.source == colab.SETUP_CELL


def _metadata_copy(folder):
    for name in colab.metadata_lines():
        shutil.copy(ROOT / name, folder / name)


def test_one_repository_address_everywhere(tmp_path):
    assert re.fullmatch(r"https://github\.com/[\w.-]+/[\w.-]+", colab.REPOSITORY)
    _metadata_copy(tmp_path)
    assert colab.write_metadata(tmp_path) == []          # pyproject.toml and CITATION.cff agree
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert colab.REPOSITORY in readme and "set this when you publish the course" in " ".join(readme.split())
    assert set(re.findall(r"https://github\.com/[\w.-]+/[\w.-]+", readme)) <= {colab.REPOSITORY}


def test_publishing_rewrites_the_metadata_copies(tmp_path, monkeypatch):
    _metadata_copy(tmp_path)
    monkeypatch.setattr(colab, "REPOSITORY", "https://github.com/someone/course")
    assert {p.name for p in colab.write_metadata(tmp_path)} == {"pyproject.toml", "CITATION.cff"}
    assert 'Repository = "https://github.com/someone/course"' in (tmp_path / "pyproject.toml").read_text()
    assert ('Changelog = "https://github.com/someone/course/blob/main/CHANGELOG.md"'
            in (tmp_path / "pyproject.toml").read_text())
    assert 'repository-code: "https://github.com/someone/course"' in (tmp_path / "CITATION.cff").read_text()
    assert "colab.research.google.com/github/someone/course/blob/main/notebooks/05_x.ipynb" == \
        colab.link("notebooks/05_x.ipynb").removeprefix("https://")
    (tmp_path / "CITATION.cff").write_text("cff-version: 1.2.0\n")
    with pytest.raises(RuntimeError, match="CITATION.cff: expected one line"):
        colab.write_metadata(tmp_path)
