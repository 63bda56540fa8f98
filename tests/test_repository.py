"""Repository rules: notebooks stored without outputs, conda and pip dependency lists in sync."""
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
