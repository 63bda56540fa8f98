"""The answers of a notebook's kernel as data: :func:`extract` runs in the kernel once the
notebook has run, and writes, for each question, the value of its ``answer_name`` (as
:mod:`gemmlab.judging.values` encodes it, all within :data:`ANSWER_BYTES`) or, for a code
question, the source of the cell that defines it (:func:`gemmlab.judging.source.code_of`). Its
readers: ``gl.progress()`` (:mod:`gemmlab.grading.progress`) and the grader's runner, in a graded
kernel (the grader reads the file back, size-checked, in its own process).
"""
import ast
import json
import os

from . import code_of, is_missing
from .values import Budget, encode, opaque

ANSWER_BYTES = 1 << 20            # the values of one notebook's answers together (the bank's
                                  # largest reference answer encodes to 102 bytes)


def _defines(source, name):
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name == name:
            return True
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id == name:
            return True
    return False


def _collect(request, namespace, budget):
    name = request["answer_name"]
    if name not in namespace:
        return {"missing": True}
    value = namespace[name]
    if not request.get("code") or is_missing(value):
        return {"value": encode(value, budget)}
    try:
        source, defined_as = code_of(value)
    except (TypeError, ValueError) as exc:
        return {"value": opaque(value), "error": str(exc)}
    return {"source": source, "name": name if _defines(source, name) else defined_as}


def extract(requests, path, namespace):
    """Write to ``path`` (JSON) each requested answer found in ``namespace`` (the kernel's).

    ``requests``: [{"id", "answer_name", "code": bool}]. Each entry of the output is
    {"missing": true}, {"value": encoded} or {"source": cell text, "name": name} (code questions),
    possibly with an "error" that says why the code could not be collected.
    """
    answers, budget = {}, Budget(ANSWER_BYTES)      # what the grader reads, for all of them
    for request in requests:
        try:
            answers[request["id"]] = _collect(request, namespace, budget)
        except Exception as exc:  # a student's object can raise anywhere (e.g. in __eq__)
            answers[request["id"]] = {"error": f"could not be collected: {type(exc).__name__}"}
    text = json.dumps({"answers": answers})
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)


def code_cells(data):
    """The sources of a notebook's code cells (nbformat 4 JSON, read directly: nbformat's
    validation adds nothing here); ValueError if it is not one."""
    nb = json.loads(data.decode("utf-8-sig"))       # a byte-order mark is allowed
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list) \
            or not isinstance(nb.get("nbformat"), int) or nb["nbformat"] < 4:
        raise ValueError("expected the JSON of a Jupyter notebook, format 4")
    sources = []
    for cell in nb["cells"]:
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            source = cell.get("source", "")
            if isinstance(source, list) and all(isinstance(line, str) for line in source):
                source = "".join(source)
            if not isinstance(source, str):
                raise ValueError("a code cell whose source is not text")
            sources.append(source)
    return sources


def notebook(cells, requests, path):
    """The notebook to run (nbformat): this module's import first (while the kernel is fresh, so
    a notebook that then uses up its memory still has its answers collected), the ``cells``, and
    last the :func:`extract` of ``requests`` into ``path``."""
    import nbformat
    extract = (f"import gemmlab.judging.collected as _gemmlab_answers\n"
               f"_gemmlab_answers.extract({requests!r}, {str(path)!r}, get_ipython().user_ns)")
    sources = ["import gemmlab.judging.collected", *cells, extract]
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
