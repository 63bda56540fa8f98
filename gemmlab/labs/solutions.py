"""The reference answers of the labs: the kernels and per-rank programs in the solutions
notebooks, run as the grader runs a student's cell (the code-question preamble, then the cell,
with ``check`` a no-op).

The bank's lab questions take their reference from here, so the worked answer a student reads in
``solutions/`` is the one the tests hold to the lab's checks, and it is their only home: the
package has no copy a notebook or a worker could import or call (``solutions/`` is neither in a
student release nor in a graded run's package copy).
"""
import json
import re
from pathlib import Path

from ..judging import load_function

ROOT = Path(__file__).resolve().parents[2]
def solution(question_id, folder=None, name=None):
    """The object the solutions notebook of the question's lesson defines under its name
    ("05.lab_tiled" -> ``lab_tiled`` of ``solutions/05_*.ipynb``; ``name`` when the answer's name
    is another, "07.lab_ring" -> ``ring_allreduce``); ``folder="exercises"`` gives the student's
    skeleton instead."""
    source, name, filename = cell(question_id, folder, name)
    return load_function(source, name, filename)


def cell(question_id, folder=None, name=None):
    """(source, name, label) of the notebook cell that defines the question's answer."""
    lesson, default = question_id.split(".", 1)
    name = name or default
    folder = ROOT / (folder or "solutions")
    paths = sorted(folder.glob(f"{lesson}_*.ipynb"))
    if not paths:
        raise FileNotFoundError(f"no notebook for lesson {lesson} in {folder}")
    cells = json.loads(paths[0].read_text(encoding="utf-8"))["cells"]
    defines = re.compile(rf"^def {re.escape(name)}\(", re.M)
    for number, c in enumerate(cells, 1):
        source = "".join(c["source"])
        if c["cell_type"] == "code" and defines.search(source):
            return source, name, f"<{folder.name}/{paths[0].name}, cell {number}>"
    raise LookupError(f"{paths[0].name} has no cell that defines {name}()")
