"""Exercise checking for students (``check``, ``hint``, ``reveal``, ``progress``), the question
bank (``bank/``), and the course's handout tools (``assign``: exercises from solutions;
``handout``: ``gemmlab work`` and ``--release``). The answer kinds and verdicts are in
:mod:`gemmlab.judging`; grading a class is the grader's own package, which imports this one
(``gemmlab grade`` runs it)."""
from . import judged_cell
from .checker import FAIL, NOT_ATTEMPTED, PASS, Result, check, judge
from .hints import hint
from .reveal import reveal

judged_cell.install()       # in IPython: cell run times, and a NameError naming the cell to run

__all__ = ["check", "hint", "reveal", "judge", "Result", "PASS", "FAIL", "NOT_ATTEMPTED"]
