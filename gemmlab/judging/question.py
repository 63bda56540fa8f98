"""Questions of the exercise bank: what is asked, how an answer is compared (its kind, see
:mod:`gemmlab.judging.kinds`), which wrong answers are known and what misconception each one
reveals.

A question holds a *reference computation* (a function), not a pasted literal, wherever the value
can be computed, so the bank and the lessons cannot drift apart.
"""
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from .allow import Allows
from .kinds import Number


@dataclass(frozen=True)
class Wrong:
    """A known wrong answer (a value, or a function computing it) and the misconception it shows."""
    value: Any
    feedback: str


@dataclass(frozen=True)
class Question:
    id: str
    prompt: str
    answer: Callable[[], Any]
    kind: Any = field(default_factory=Number)
    wrong: Sequence[Wrong] = ()
    hint: str = ""
    explain: str = ""       # shown after a pass: the one idea the question is about
    answer_name: str = ""   # the notebook variable or function holding the answer ("" -> the
                            # part of the id after the dot); the grader reads it by this name
    allows: Allows = None   # a code question's: what its answer may do (the bank's are in
                            # gemmlab/grading/allowed.py; default: plain Python); the prompt
                            # states a declaration given
    points: float = 0       # what it counts in a grade (0: default_points, by its kind); an
                            # instructor's file overrides it when grading a class

    def __post_init__(self):
        if not self.answer_name:
            object.__setattr__(self, "answer_name", self.id.split(".", 1)[-1])
        if self.allows is not None and self.allows.sentence() not in self.prompt:
            object.__setattr__(self, "prompt", f"{self.prompt} {self.allows.sentence()}")
        if self.is_code and self.allows is None:
            object.__setattr__(self, "allows", Allows())
        if not self.points:
            object.__setattr__(self, "points", default_points(self))
        if not self.answer_name.isidentifier():
            raise ValueError(f"question {self.id!r}: answer_name {self.answer_name!r} is not a "
                             f"Python name")

    @property
    def rules(self):
        """The declaration, by the name the judging of a cell reads (gemmlab.judging.cell)."""
        return self.allows

    @property
    def is_code(self):
        """Whether the answer is code (a function, kernel, per-rank program) that the kind runs:
        such kinds have a ``judge(question, fn, rng)`` method."""
        return callable(getattr(self.kind, "judge", None))

    @property
    def lesson(self):
        return self.id.split(".", 1)[0]


def default_points(question):
    """A question's points by its kind: a lab (code named ``NN.lab_*``: a kernel or a per-rank
    program) 5, other code 3, a value 2, a choice among options 1."""
    if question.is_code:
        return 5 if question.id.split(".", 1)[-1].startswith("lab_") else 3
    return 1 if hasattr(question.kind, "options") else 2


def evaluate(value):
    """A reference or wrong value may be given as a zero-argument function (computed lazily)."""
    return value() if callable(value) else value
