"""The question bank as a notebook being graded sees it: prompts and answer names, no references.

The copy of gemmlab that ``gemmlab grade`` gives the notebooks it runs has ``grading/bank/lNN.py``
stubs calling :func:`questions_of` (:meth:`gemmlab_grader.integrity.PackageSnapshot.write_copy`),
built from ``bank/public.json``. ``.prompt`` still works, ``.answer`` raises, and ``check()`` says
that the grader judges the answer. The real bank stays in the grader's process.
"""
import json
from pathlib import Path

import gemmlab
from gemmlab.judging import NOT_ATTEMPTED, Question


class Withheld:
    """The kind of every question of the withheld bank."""

    def coerce(self, answer):
        return answer

    def judge(self, question, answer, rng=None):
        return NOT_ATTEMPTED, ("not checked in this run: `gemmlab grade` collects this answer "
                               "and judges it itself.")


def withheld(*args, **kwargs):
    """A question's ``answer`` where the references are kept away from students' code."""
    raise RuntimeError("the reference answers are not available while a notebook is graded")


def questions_of(lesson):
    """The questions of ``lesson`` ("01") from ``bank/public.json``, without references."""
    bank = Path(gemmlab.__file__).parent / "grading" / "bank"
    public = json.loads((bank / "public.json").read_text())
    return [Question(id=q["id"], prompt=q["prompt"], answer=withheld, kind=Withheld(),
                     answer_name=q["answer_name"]) for q in public if q["id"][:2] == lesson]
