"""``check(question_id, answer)``: compare a student's answer with the bank and say why it is wrong.

The verdict is printed (so an exercise cell shows it) and returned as a :class:`Result`. A check
never raises for a student's answer: a wrong type, an exception in the student's function and a
missing answer all become a verdict with a message. ``check()`` is the student's feedback only:
grades come from ``gemmlab grade`` (the grader, a package of its own), which collects the answers
and judges them itself with :func:`judge_question`.

Two sorts of questions: a *value* question's kind has ``coerce``/``same``/``show`` and the value
is compared with the reference here; a *code* question's kind also has
``judge(question, fn, rng=None) -> (status, feedback)``, which runs the student's code on the
public cases (``rng`` None, what ``check()`` uses) or on hidden cases drawn from ``rng`` (what the
grader uses), and never raises for the student's code. A kernel lab's ``judge`` returns a third
item, the picture of the run (plain data, :mod:`gemmlab.labs.observed`): ``check(..., show=True)``
draws it, and a race or an out-of-bounds access draws it unasked (:mod:`gemmlab.viz.kernel`).
"""
import os
from dataclasses import dataclass, field

from .. import device, doing
from ..judging import FAIL, NOT_ATTEMPTED, PASS, AnswerTypeError, code_of, evaluate, is_missing
from ..judging import runtime
from ..judging.cell import judge_alone, prepared
from ..judging.source import from_other_cells, load_function
from ..judging.worker import CELL_FILE
from . import hints, judged_cell
from .bank import get_question

_MARKS = {PASS: "PASS", FAIL: "FAIL", NOT_ATTEMPTED: "NOT ATTEMPTED"}


@dataclass
class Result:
    question: str
    status: str
    feedback: str
    picture: dict = field(default=None, repr=False, compare=False)   # a kernel lab's run
    cases: tuple = field(default=None, repr=False, compare=False)    # (right, run): a code answer's
    _printed: bool = field(default=False, repr=False, compare=False)

    def __bool__(self):
        return self.status == PASS

    def __str__(self):
        return f"[{_MARKS[self.status]}] {self.question}: {self.feedback}"

    def __repr__(self):
        return f"Result({self.question!r}, {self.status!r})"

    def _ipython_display_(self):
        # A cell ending in check(...) would show the verdict twice: once printed by check(),
        # once as the cell's value. Skip the second, then display normally again.
        if self._printed:
            self._printed = False
        else:
            print(self)


def _judge_value(q, value):
    """(status, feedback) for an already coerced value."""
    kind = q.kind
    expected = evaluate(q.answer)
    if kind.same(value, expected):
        return PASS, f"{kind.show(value)} is right. {q.explain}".strip()
    for wrong in q.wrong:
        if kind.same(value, evaluate(wrong.value)):
            return FAIL, f"{kind.show(value)} is a known wrong answer: {wrong.feedback}"
    if hasattr(kind, "close") and kind.close(value, expected):
        off = abs(value - float(expected)) / abs(float(expected))
        return FAIL, (f"close: {kind.show(value)} is {off:.1%} off the answer. The idea is probably "
                      f"right: check the arithmetic, the unit and the rounding (the question asks "
                      f"for {kind.precision()}).")
    hint = f" Hint: {q.hint}" if q.hint else ""
    return FAIL, f"{kind.show(value)} is not right.{hint}"


def judge_question(q, answer, rng=None):
    """The verdict on ``answer`` for the Question ``q``; ``rng`` draws a code question's hidden
    cases (None: its public ones). Value questions ignore ``rng``."""
    if is_missing(answer):
        return Result(q.id, NOT_ATTEMPTED, f"no answer yet. {q.prompt}")
    picture = None
    try:
        value = q.kind.coerce(answer)
        if q.is_code:
            status, feedback, *picture = q.kind.judge(q, value, rng)
            picture = picture[0] if picture else None
        else:
            status, feedback = _judge_value(q, value)
    except AnswerTypeError as exc:
        status, feedback = FAIL, f"{exc}."
    return Result(q.id, status, feedback, picture)


def judge(question_id, answer, rng=None):
    """The verdict for one answer, without printing (see :func:`judge_question`)."""
    return judge_question(get_question(question_id), answer, rng)


def _cell(answer):
    """(source, name) of the notebook cell that defines the function ``answer``, or None for a
    function of a file (a module, a test): a cell's code lives only in memory (IPython keeps it
    in linecache), never at its file name."""
    try:
        source, name = code_of(answer)
    except (TypeError, ValueError):
        return None
    filename = getattr(getattr(answer, "py_func", answer), "__code__").co_filename
    return None if os.path.exists(filename) else (source, name)


_VERDICTS = {}          # (question, cell, name) -> a verdict on the public cases, which are fixed


def judge_cell_here(q, source, name):
    """(status, feedback, picture) of the code question ``q`` on the function ``name`` of the
    cell ``source`` run alone (the preamble, then the cell: :func:`load_function`), judged in
    this process on the public cases by the same kind the grader uses. The public cases are
    fixed, so a kernel lab's verdict on an unchanged cell is kept: checking it again runs nothing
    (a verdict that ran out of time is not kept: a busy machine may have caused it)."""
    key = (q.id, source, name)
    if key in _VERDICTS:
        return _VERDICTS[key]
    verdict = _judge_cell_here(q, source, name)
    if hasattr(q.kind, "worker_source") and "did not finish" not in verdict[1]:
        _VERDICTS[key] = verdict
    return verdict


def _judge_cell_here(q, source, name):
    source, problem = prepared(q, source, name)
    if problem:
        return FAIL, problem, None
    try:
        fn = load_function(source, name, filename=CELL_FILE)
    except Exception as exc:  # the student's cell, run alone as the grader runs it
        return FAIL, f"your cell, run alone, raised {type(exc).__name__}: {str(exc)[:300]}", None
    try:
        status, feedback, *picture = q.kind.judge(q, q.kind.coerce(fn), None)
    except AnswerTypeError as exc:
        return FAIL, f"{exc}.", None
    return status, feedback, (picture[0] if picture else None)


def judge_alone_in_a_worker(q, answer):
    """The verdict on a code answer from a notebook cell, as the grader reaches it: the cell run
    alone (the grader's preamble, the question's rules) and judged by the grader's judging
    functions: here on the simulator backend, in one child on the simulator on a GPU backend
    (:func:`gemmlab.judging.cell.judge_alone`). A name the cell takes from another cell is named.
    A function from a file is judged as it is."""
    if is_missing(answer):
        return judge_question(q, answer)
    try:
        q.kind.coerce(answer)
    except AnswerTypeError as exc:
        return Result(q.id, FAIL, f"{exc}.")
    cell = _cell(answer)
    if cell is None:
        return judge_question(q, answer)
    source, name = cell
    if runtime.serves(q):
        (status, feedback), picture = runtime.judge(q, source, name), None
    elif device.backend() == "sim":
        status, feedback, picture = judge_cell_here(q, source, name)
    else:
        status, feedback, picture = judge_alone(q, source, name, picture=True)
    if status != PASS:
        missing = from_other_cells(answer, source)
        if missing:
            feedback += (f" (The grader runs this cell alone, after the fixed preamble: "
                         f"{', '.join(missing)} come{'s' if len(missing) == 1 else ''} from "
                         f"another cell of your notebook. Define "
                         f"{'it' if len(missing) == 1 else 'them'} in this cell.)")
    elif hasattr(q.kind, "after_check"):
        status, feedback = q.kind.after_check(q, answer, status, feedback)
    return Result(q.id, status, feedback, picture)


def check(question_id, answer, show=False):
    """Check ``answer`` for the question ``question_id``; print the verdict and return it. A
    code answer defined in a notebook cell is judged as the grade judges it: its cell alone
    (:func:`judge_alone_in_a_worker`); a check past a second says what it is doing on one line
    (:mod:`gemmlab.doing`). For a kernel lab, ``show=True`` also draws what one block of the
    kernel did (each thread's reads and writes, the barriers); after a race or an out-of-bounds
    access it is drawn anyway."""
    q = get_question(question_id)
    alone = q.is_code and getattr(q.kind, "proxy_judge", False)   # (not a withheld bank's)
    with doing.showing():
        result = judge_alone_in_a_worker(q, answer) if alone else judge_question(q, answer)
    result.feedback += hints.after_check(question_id, result)
    print(result)
    judged = "" if is_missing(answer) else judged_cell.describe(
        judged_cell.answer_name(answer, q.answer_name), answer)
    if judged:
        print(judged)
    result._printed = True
    if result.picture is not None:
        from ..viz.kernel import display_picture
        display_picture(result.picture, show)
    return result


__all__ = ["check", "judge", "judge_question", "judge_alone_in_a_worker", "judge_cell_here",
           "Result", "PASS",
           "FAIL", "NOT_ATTEMPTED"]
