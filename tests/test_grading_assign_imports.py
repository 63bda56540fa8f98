"""What a notebook's first import and a code answer's worker pull in: the modules they load are
those they use. nbformat (through jsonschema, which builds an IRI grammar on import) cost a
second per notebook and per worker when ``gemmlab.grading`` imported it on import."""
import json
import subprocess
import sys

import pytest

HEAVY = ("nbformat", "jsonschema", "nbclient", "jupyter_client", "matplotlib.pyplot")


@pytest.mark.parametrize("statement", [
    "from gemmlab.grading import check, hint, reveal",      # every exercise notebook's first cell
    "from gemmlab.grading.answer import load_answer",       # every Function answer's worker
    "import gemmlab.judging.worker",
])
def test_the_checking_path_loads_no_notebook_machinery(statement):
    probe = f"import sys, json\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True, env={"GEMMLAB_BACKEND": "sim", "PATH": "/usr/bin:/bin",
                                           "PYTHONPATH": ":".join(p for p in sys.path if p)})
    loaded = set(json.loads(done.stdout.splitlines()[-1]))
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


def test_every_exercise_notebook_imports_what_its_feedback_names():
    """A FAIL says `hint('05.lab_tiled')` and `reveal(...)`: the import cell that check() comes
    from brings both, so typing what the feedback says raises no NameError."""
    import re
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent
    for path in sorted((root / "exercises").glob("[0-9][0-9]_*.ipynb")):
        cells = ["".join(c["source"]) for c in json.loads(path.read_text())["cells"]
                 if c["cell_type"] == "code"]
        imported = next(c for c in cells if "from gemmlab.grading import" in c)
        names = re.search(r"from gemmlab\.grading import ([\w, ]+)", imported)[1]
        assert {"check", "hint", "reveal"} <= {n.strip() for n in names.split(",")}, path.name
        assert "import gemmlab as gl" in imported, path.name         # gl.progress() too
