"""Answer names: the grader reads each answer from the notebook variable its question names."""
import ast
from pathlib import Path

import nbformat
import pytest

from gemmlab.grading.bank import get_question, lesson_questions

ROOT = Path(__file__).resolve().parent.parent


def _check_calls(path):
    """[(question id, source of check()'s answer argument)], names the notebook assigns."""
    nb = nbformat.read(path, as_version=4)
    trees = [ast.parse(c.source) for c in nb.cells if c.cell_type == "code"]
    nodes = [node for tree in trees for node in ast.walk(tree)]
    assigned = {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    assigned |= {n.name for n in nodes if isinstance(n, ast.FunctionDef)}
    calls = [(n.args[0].value, ast.unparse(n.args[1])) for n in nodes
             if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "check"]
    return calls, assigned


@pytest.mark.parametrize("path", sorted((ROOT / "solutions").glob("[0-9][0-9]_*.ipynb")),
                         ids=lambda p: p.stem)
def test_each_check_passes_its_questions_answer_name(path):
    calls, assigned = _check_calls(path)
    assert {qid for qid, _ in calls} == set(lesson_questions(path.name[:2]))
    for qid, arg in calls:
        name = get_question(qid).answer_name
        assert arg == name, f"{qid}: check() is given {arg!r}, the grader reads {name!r}"
        assert name in assigned, f"{qid}: the notebook never assigns {name!r}"
