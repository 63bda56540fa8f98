"""``reveal(question_id)``: the course's worked answer to a question, with its explanation, on
request and only after the student has tried.

The worked answer is the solution cell of the course's ``solutions/`` notebook (a clone of the
repository has it; a wheel does not carry it). A class release (``gemmlab assign --release``)
ships no worked answers, and ``reveal`` says so. Before the first reveal of a question it asks
once whether to go on (``yes=True`` answers for it), and the reveal is noted in the student's
record, so that ``gl.progress()`` shows it.
"""
import json

from .. import course
from . import student
from .assign import BEGIN, END, strip_source
from .bank import get_question
from .handout import RELEASE_MARK
from .hints import steps

_defines = ("def {name}(", "{name} =", "{name}=")


def worked_answer(question):
    """The source of the solution cell that answers ``question`` (its solution markers taken
    out), or None when this install has no solutions/."""
    folder = course.root() / "solutions"
    lesson = question.id.split(".")[0]
    for path in sorted(folder.glob(f"{lesson}_*.ipynb")) if folder.is_dir() else ():
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        for cell in cells:
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            if cell["cell_type"] != "code" or BEGIN not in source:
                continue
            inside = source.split(BEGIN, 1)[1]
            student_view = strip_source(source)
            if any(form.format(name=question.answer_name) in inside + student_view
                   for form in _defines):
                return "\n".join(line for line in source.split("\n")
                                 if line.strip() not in (BEGIN, END))
    return None


def _explanation(question):
    parts = [question.explain] if question.explain else []
    ladder = steps(question.id)
    if len(ladder) > 1:
        parts += [f"- {text}" for text in ladder]
    return "\n".join(parts)


def reveal(question_id, yes=False):
    """Print the worked answer of ``question_id`` with its explanation, or why it is not shown
    (no attempt yet, not confirmed, or no worked answers in this install). Returns None, so that
    Jupyter shows the text once, not again as the cell's value."""
    q = get_question(question_id)
    if (course.root() / RELEASE_MARK).exists():
        print(f"{question_id}: this is a class release of the course: it ships no worked "
              f"answers. Ask your instructor, or use hint({question_id!r}).")
        return
    if not student.attempted(question_id):
        print(f"{question_id}: try it first. reveal() shows the worked answer once you have "
              f"checked an answer of your own (check({question_id!r}, ...)); hint("
              f"{question_id!r}) helps on the way.")
        return
    code = worked_answer(q)
    if code is None:
        print(f"{question_id}: this install of the course has no worked answers (they are in "
              f"the repository's solutions/, in a clone). hint({question_id!r}) gives hints.")
        return
    if question_id not in student.revealed() and not yes:
        reply = input(f"Show the worked answer of {question_id}? It is noted in your progress. "
                      f"[y/N] ")
        if reply.strip().lower() not in ("y", "yes"):
            print("Not shown.")
            return
    student.note_reveal(question_id)
    text = f"Worked answer of {question_id}:\n\n{code}\n"
    explanation = _explanation(q)
    if explanation:
        text += f"\nWhy it works:\n{explanation}\n"
    print(text)
