"""Every question of the bank, whatever its lesson: its reference passes, each known wrong answer
fails with its own feedback, and `...` is "not attempted". Then the notebooks: graded by
`gemmlab grade`, each solutions notebook passes every question of its lesson, and each exercise
notebook runs through with every question "not attempted"."""
import inspect
from pathlib import Path

import numpy as np
import pytest

from gemmlab.grading import judge, sandbox
from gemmlab.grading.bank import lesson_questions, questions
from gemmlab.grading.grade import Settings, grade_notebook
from gemmlab.grading.question import Function, evaluate

ROOT = Path(__file__).resolve().parent.parent
BANK = questions()


def _reference(q):
    """A value question's reference value; a code question's reference function (the kernel
    labs give a zero-argument loader of it: their kernels come from the solutions notebooks)."""
    if not (q.is_code or isinstance(q.kind, Function)):
        return evaluate(q.answer)
    takes_arguments = inspect.signature(q.answer).parameters
    return q.answer if takes_arguments else q.answer()


@pytest.mark.parametrize("qid", sorted(BANK))
def test_reference_passes_and_missing_answer_is_not_attempted(qid):
    assert judge(qid, _reference(BANK[qid])).status == "pass"
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


# The sandbox where bubblewrap works (faster too: no environment watch), else without.
GRADING = Settings(timeout=300, seed=1, sandbox=sandbox.bwrap() is not None)


def _notebooks(folder):
    return sorted((ROOT / folder).glob("[0-9][0-9]_*.ipynb"))


@pytest.mark.parametrize("path", _notebooks("solutions"), ids=lambda p: p.stem)
def test_graded_solutions_pass_every_question_of_their_lesson(path):
    grade = grade_notebook(path, settings=GRADING)
    assert not grade.notes, grade.notes
    wanted = lesson_questions(path.name[:2])
    assert wanted, f"lesson {path.name[:2]} has no questions in the bank"
    failing = {q: grade.feedback[q] for q in wanted if grade.results[q] != "pass"}
    assert not failing, failing


@pytest.mark.parametrize("path", _notebooks("exercises"), ids=lambda p: p.stem)
def test_graded_exercises_run_through_unanswered(path):
    grade = grade_notebook(path, settings=GRADING)
    assert not grade.notes, grade.notes
    answered = {q: s for q, s in grade.results.items() if s != "not attempted"}
    assert not answered, answered
