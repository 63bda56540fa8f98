"""The course as installed from its wheel (not editable): the wheel carries the notebooks,
exercises and recorded runs; installed into a fresh venv, `gemmlab work DIR` hands them out, the
recorded runs are found, and the Colab cell's logic runs there against the wheel's own metadata.

Building the wheel needs the build backend (setuptools >= 77) from PyPI, so the test is marked
slow (about a minute; -m 'not slow' skips it). The fresh venv reuses this environment's
dependencies through a .pth line (no download), but not its editable gemmlab: only the wheel's."""
import json
import os
import subprocess
import sys
import sysconfig
import textwrap
import venv
import zipfile
from pathlib import Path

import pytest

from gemmlab import colab, course

ROOT = Path(__file__).resolve().parent.parent


def test_a_checkout_reads_its_own_folders():
    assert course.root() == ROOT
    assert course.path("benchmarks") == ROOT / "benchmarks"
    with pytest.raises(ValueError, match="expected one of"):
        course.path("solutions")                    # never shipped


def test_an_install_without_the_course_says_so(monkeypatch, tmp_path):
    monkeypatch.setattr(course, "root", lambda: tmp_path)
    with pytest.raises(FileNotFoundError, match="has no benchmarks/"):
        course.path("benchmarks")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    # a notebook renamed since an earlier build: setuptools keeps build/lib, so its old copy must
    # be cleared, not shipped beside the new name
    stale = ROOT / "build" / "lib" / "gemmlab" / "_course" / "exercises" / "00_renamed_since.ipynb"
    stale.parent.mkdir(parents=True, exist_ok=True)
    stale.write_text("{}")
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out),
                           str(ROOT)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    (built,) = out.glob("gemmlab-*.whl")
    return built


@pytest.mark.slow
def test_the_wheel_carries_the_course(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for part, pattern in (("notebooks", "*.ipynb"), ("exercises", "*.ipynb"), ("benchmarks", "*.json")):
        for source in (ROOT / part).glob(pattern):
            assert f"gemmlab/_course/{part}/{source.name}" in names, source
    assert "gemmlab/_course/benchmarks/nccl_h200_np1/allreduce_nccl_np1.json" in names
    for kernel in (*ROOT.glob("gemmlab/**/*.cu"), *ROOT.glob("gemmlab/**/*.cuh")):  # NVRTC's input
        assert kernel.relative_to(ROOT).as_posix() in names, kernel
    for settings in ("labconfig/default_setting_overrides.json", "kernels/python3/kernel.json"):
        assert f"gemmlab/_course/jupyter/{settings}" in names      # what `gemmlab lab` serves with
    assert not any(n.startswith("gemmlab/_course/solutions") for n in names)
    assert {n for n in names if n.startswith("gemmlab/_course/exercises/")} == \
        {f"gemmlab/_course/exercises/{p.name}" for p in (ROOT / "exercises").glob("*.ipynb")}
    metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
    text = zipfile.ZipFile(wheel).read(metadata).decode()
    assert "License-Expression: MIT AND CC-BY-4.0" in text
    assert 'Provides-Extra: cuda13' in text and "Provides-Extra: mpi" in text


@pytest.mark.slow
def test_installed_from_the_wheel_the_course_hands_out_and_finds_its_runs(wheel, tmp_path):
    env_dir = tmp_path / "fresh"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          capture_output=True, text=True, check=True).stdout.strip()
    # this environment's dependencies, after the fresh site (a .pth dir is not scanned for .pth
    # files, so the editable install of the checkout stays out)
    Path(site, "deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install",
                           "--no-deps", "--no-index", "-q", str(wheel)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    work = tmp_path / "class"
    env = {**os.environ, "GEMMLAB_BACKEND": "sim"}
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    handed = subprocess.run([str(env_dir / "bin" / "gemmlab"), "work", str(work)], cwd=tmp_path,
                            capture_output=True, text=True, timeout=300, env=env)
    assert handed.returncode == 0, handed.stderr
    # the student folder has the repository's layout, so every link between notebooks resolves
    assert sorted(p.name for p in (work / "exercises").glob("*.ipynb")) == \
        sorted(p.name for p in (ROOT / "exercises").glob("*.ipynb"))
    assert sorted(p.name for p in (work / "notebooks").glob("*.ipynb")) == \
        sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))
    probe = textwrap.dedent(f"""
        import json, sys, types
        import gemmlab, gemmlab.course, gemmlab.colab as colab
        from gemmlab import measure
        run = measure.recorded("gpu_ladder.json", required=("machine", "results"))
        # the Colab cell, on a faked Colab with a CUDA 12.4 driver; pip is recorded, not run
        sys.modules["google.colab"] = types.ModuleType("google.colab")
        commands = []
        original = colab.setup
        colab.setup = lambda: original(run=commands.append, driver=(12, 4), cupy={{}})
        exec({colab.SETUP_CELL!r}, {{}})
        print(json.dumps({{"file": gemmlab.__file__, "root": str(gemmlab.course.root()),
                          "gpu": run["machine"]["gpu"], "commands": commands,
                          "settings": str(gemmlab.course.jupyter_settings())}}))
    """)
    found = subprocess.run([str(python), "-c", probe], cwd=tmp_path, capture_output=True,
                           text=True, timeout=300, env=env)
    assert found.returncode == 0, found.stderr[-2000:]
    report = json.loads(found.stdout.strip().splitlines()[-1])
    assert report["file"].startswith(site) and report["root"].endswith("gemmlab/_course")
    assert report["settings"] == report["root"] + "/jupyter"     # what `gemmlab lab` serves with
    committed = json.loads((ROOT / "benchmarks" / "gpu_ladder.json").read_text())
    assert report["gpu"] == committed["machine"]["gpu"]           # the wheel's copy of the run
    assert report["commands"][-1][:3] == ["install", "-q", "cupy-cuda12x>=13"]
    assert any(c.startswith("numba-cuda[cu12]") for c in report["commands"][-1])
