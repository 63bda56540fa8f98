"""What a notebook's first import and a code answer's worker pull in: the modules they load are
those they use. nbformat (through jsonschema, which builds an IRI grammar on import) cost a
second per notebook and per worker when ``gemmlab.grading`` imported it on import."""
import json
import subprocess
import sys

import pytest

HEAVY = ("nbformat", "jsonschema", "nbclient", "jupyter_client", "matplotlib.pyplot")


@pytest.mark.parametrize("statement", [
    "from gemmlab.grading import check",                    # every exercise notebook's first cell
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
