"""Repository rules: notebooks stored without outputs, conda and pip dependency lists in sync, each
test file named after what it tests, the README's course map naming modules that exist."""
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted(p for d in ("notebooks", "solutions", "exercises")
                   for p in (ROOT / d).glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_notebook_is_committed_without_outputs(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    dirty = [i + 1 for i, c in enumerate(nb["cells"])
             if c["cell_type"] == "code" and (c.get("outputs") or c.get("execution_count"))]
    assert not dirty, f"{path.name}: cells {dirty} have outputs; clear them before committing"


def _name(requirement):
    return re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0].strip().lower().replace("_", "-")


def test_environment_yml_lists_the_pyproject_dependencies():
    # plain text, not tomllib: the suite also runs on Python 3.10 and uninstalled (gpu-test)
    block = re.search(r"^dependencies = \[(.*?)^\]", (ROOT / "pyproject.toml").read_text(),
                      re.S | re.M).group(1)
    wanted = {_name(r) for r in re.findall(r'"([^"]+)"', block)}
    text = (ROOT / "environment.yml").read_text().split("dependencies:", 1)[1]
    items = re.findall(r"^\s*-\s+(\S+)", text, re.M)
    listed = {_name(m) for m in items if m not in ("pip", "pip:", "-e")} - {"python"}
    assert wanted - listed == set(), f"missing from environment.yml: {sorted(wanted - listed)}"
    assert listed - wanted == set(), f"only in environment.yml: {sorted(listed - wanted)}"


def test_doctor_prints_backend_versions_and_sizes():
    out = subprocess.run([sys.executable, "-m", "gemmlab.cli", "doctor"], capture_output=True,
                         text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    for word in ("backend", "numba-cuda", "ml_dtypes", "cupy", "problem sizes"):
        assert word in out.stdout


def test_the_license_is_stated_in_pyproject_and_citation():
    text = (ROOT / "pyproject.toml").read_text()
    assert 'license = "MIT AND CC-BY-4.0"' in text
    assert "MIT License" in (ROOT / "LICENSE").read_text()
    assert "creativecommons.org/licenses/by/4.0" in (ROOT / "LICENSE").read_text()
    assert 'license: "MIT AND CC-BY-4.0"' in (ROOT / "CITATION.cff").read_text()


def _names_code(base, words):
    """Whether ``words`` start with the path of a module or folder under ``base``, parts joined by
    "_" (a part may hold "_" itself): ["kernels", "launch"] is kernels/launch.py. Words after a
    module are free (a topic: test_viz_cache_tiling.py); after a folder they must go on inside it."""
    for cut in range(1, len(words) + 1):
        part = "_".join(words[:cut])
        if (base / f"{part}.py").is_file():
            return True
        if (base / part).is_dir() and not part.startswith(("_", ".")):
            if cut == len(words) or _names_code(base / part, words[cut:]):
                return True
    return False


@pytest.mark.parametrize("path", sorted((ROOT / "tests").glob("test_*.py")), ids=lambda p: p.name)
def test_a_test_file_is_named_after_the_code_it_tests(path):
    """The rule of README's "Where a test goes": tests/test_<path>.py for gemmlab/<path>.py (or a
    sub-package), or for <path> from the repository root when the code is outside the package."""
    words = path.stem.split("_")[1:]
    if path.name == "test_repository.py":
        return
    assert _names_code(ROOT / "gemmlab", words) or _names_code(ROOT, words), (
        f"{path.name} names no module: call it test_<path of the module it tests>.py, e.g. "
        f"test_kernels_launch.py for gemmlab/kernels/launch.py (see README, 'Where a test goes')")


def test_the_course_map_names_modules_that_exist():
    rows = [line for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
            if re.match(r"\| \d\d \| \[", line)]
    assert len(rows) == len(list((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")))
    for row in rows:
        modules = re.findall(r"`([^`]+)`", row.rstrip(" |").rsplit("|", 1)[1])
        assert modules, f"the course map row {row[:8]} names no module"
        for entry in modules:
            head, _, alternatives = entry.partition("{")
            for name in alternatives.rstrip("}").split(",") if alternatives else [""]:
                target = ROOT / "gemmlab" / (head + name).rstrip("/")
                assert target.with_suffix(".py").is_file() or target.is_dir(), (
                    f"the course map names {head + name}, which is not in gemmlab/")


def test_the_naming_rule_tells_module_paths_from_other_words():
    package = ROOT / "gemmlab"
    assert _names_code(package, ["grading", "bank", "l05"])           # grading/bank/l05.py
    assert _names_code(package, ["viz", "cache", "tiling"])           # a module, then a topic
    assert _names_code(package, ["kernels"])                          # a sub-package as a whole
    assert not _names_code(package, ["grade", "hostile"])             # grade.py is in grading/
    assert not _names_code(package, ["kernels", "gemm"])              # no kernels/gemm.py
    assert _names_code(ROOT, ["docs", "site", "widget", "snapshot"])  # outside the package


def test_constraints_pin_every_dependency_within_pyproject_ranges():
    from packaging.requirements import Requirement
    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            name, _, version = line.partition("==")
            pins[_name(name)] = version.strip()
    block = re.search(r"^dependencies = \[(.*?)^\]", (ROOT / "pyproject.toml").read_text(),
                      re.S | re.M).group(1)
    for text in re.findall(r'"([^"]+)"', block):
        requirement = Requirement(text)
        if requirement.marker and not requirement.marker.evaluate({"sys_platform": "linux"}):
            continue
        pinned = pins.get(_name(requirement.name))
        assert pinned, f"constraints.txt does not pin {requirement.name}"
        assert requirement.specifier.contains(pinned, prereleases=True), (requirement, pinned)
    assert "PIP_CONSTRAINT" in (ROOT / ".ci" / "run").read_text()
