"""Every question of the bank, whatever its lesson: its reference passes, each known wrong answer
fails with its own feedback, and `...` is "not attempted"; the grader reads each answer from the
notebook variable its question names, which the solutions' checks pass. (The course's notebooks
graded against the bank: tests/test_gemmlab_grader_grade_course.py.)"""
import ast
import dataclasses
import inspect
from pathlib import Path

import nbformat
import numpy as np
import pytest

from gemmlab.grading import judge
from gemmlab.grading.checker import judge_question
from gemmlab.grading.bank import get_question, lesson_questions, questions
from gemmlab.judging import Function, evaluate

ROOT = Path(__file__).resolve().parent.parent
BANK = questions()


def _reference(q):
    """A value question's reference value; a code question's reference function (the kernel
    labs give a zero-argument loader of it: their kernels come from the solutions notebooks)."""
    if not (q.is_code or isinstance(q.kind, Function)):
        return evaluate(q.answer)
    takes_arguments = inspect.signature(q.answer).parameters
    return q.answer if takes_arguments else q.answer()


def _unhurried(q):
    """``q`` with its lab's wall-clock limit out of reach: a loaded machine must not turn a
    reference into a timeout (the limit itself is tested with endless loops in tests/test_labs_*)."""
    if not hasattr(q.kind, "time_limit"):
        return q
    return dataclasses.replace(q, kind=dataclasses.replace(q.kind, time_limit=3600.0))


@pytest.mark.parametrize("qid", sorted(BANK))
def test_reference_passes_and_missing_answer_is_not_attempted(qid):
    assert judge_question(_unhurried(BANK[qid]), _reference(BANK[qid])).status == "pass"
    assert judge(qid, ...).status == "not attempted"


@pytest.mark.parametrize("qid,index", [(qid, i) for qid in sorted(BANK)
                                       for i in range(len(BANK[qid].wrong))])
def test_each_known_wrong_answer_fails_with_its_own_feedback(qid, index):
    wrong = BANK[qid].wrong[index]
    answer = wrong.value if isinstance(BANK[qid].kind, Function) else evaluate(wrong.value)
    result = judge(qid, answer)
    assert result.status == "fail"
    assert wrong.feedback in result.feedback, "an earlier Wrong shadows this one, or it equals the answer"


FUNCTIONS = sorted(qid for qid, q in BANK.items() if isinstance(q.kind, Function))


@pytest.mark.parametrize("qid", FUNCTIONS)
def test_function_questions_judge_hidden_cases_that_differ_from_the_public_ones(qid):
    # (the labs' kinds draw their hidden shapes themselves: gemmlab/labs and its tests)
    q = BANK[qid]
    public = [repr(case) for case in q.kind.cases()]
    for seed in range(3):
        assert judge(qid, q.answer, np.random.default_rng(seed)).status == "pass"
        for wrong in q.wrong:
            assert wrong.feedback in judge(qid, wrong.value, np.random.default_rng(seed)).feedback
        assert not set(map(repr, q.kind.hidden(np.random.default_rng(seed)))) & set(public)


# --- answer names: the grader reads each answer from the variable its question names -------

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
