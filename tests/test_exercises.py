"""Instructions that work when followed (issue 38): a student who types a correct answer where a
cell says so (``# YOUR CODE HERE`` in an exercise, "replace ... by your answer" in a lesson) gets
a notebook that still runs to the end. Each test types the course's own answer, taken from
solutions/, into the student's notebook and runs it."""
import re
from pathlib import Path

import nbformat
import pytest

from gemmlab import notebook_run
from gemmlab.grading import assign
from gemmlab.grading.bank import lesson_questions, questions

ROOT = Path(__file__).resolve().parent.parent
EXERCISES = sorted((ROOT / "exercises").glob("[0-9][0-9]_*.ipynb"))
# a lesson's "type here" line: `name = ...   # replace ... by your answer`
REPLACE = re.compile(r"^(?P<indent>\s*)(?P<name>\w+) = \.\.\.(?P<comment>\s*#.*replace \.\.\. by your answer.*)$",
                     re.M)


def _blocks(source):
    """The solution blocks of a solutions cell: (indent, lines between the markers)."""
    lines, found = source.split("\n"), []
    for i, line in enumerate(lines):
        if line.strip() == assign.BEGIN:
            end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == assign.END)
            found.append((line[:len(line) - len(line.lstrip())], lines[i + 1:end]))
    return found


def type_answers(exercise, solution):
    """The exercise cell's source with each ``# YOUR CODE HERE`` placeholder typed over by the
    solution's block, as a student would: the marker line stays, the ``...`` stubs go."""
    blocks, lines, out, i = _blocks(solution), exercise.split("\n"), [], 0
    while i < len(lines):
        out.append(lines[i])
        if lines[i].strip() == "# YOUR CODE HERE":
            indent, block = blocks.pop(0)
            stubs = assign._placeholder(block, indent, "typed")[1:]
            assert lines[i + 1:i + 1 + len(stubs)] == stubs, (lines[i], stubs)
            out += block
            i += len(stubs)
        i += 1
    assert not blocks, "an answer block of solutions/ has no place in the exercise"
    return "\n".join(out)


def typed_exercise(path):
    exercise = nbformat.read(path, as_version=4)
    solution = nbformat.read(ROOT / "solutions" / path.name, as_version=4)
    assert len(exercise.cells) == len(solution.cells)
    for mine, theirs in zip(exercise.cells, solution.cells, strict=True):
        if mine.cell_type == "code":
            mine.source = type_answers(mine.source, theirs.source)
    return exercise


def _solution_value(lesson, name):
    """The expression solutions/ assigns to ``name`` inside an answer block of ``lesson``."""
    path = next((ROOT / "solutions").glob(f"{lesson}_*.ipynb"))
    for cell in nbformat.read(path, as_version=4).cells:
        for _indent, block in _blocks(cell.source):
            for line in block:
                found = re.fullmatch(rf"\s*{name}\s*=\s*(.+?)\s*", line)
                if found:
                    return found.group(1)
    raise AssertionError(f"solutions/{lesson}_* assigns no {name}")


def typed_lesson(path, answer_of=_solution_value):
    """The lesson with every "replace ... by your answer" line given ``answer_of``'s answer."""
    nb = nbformat.read(path, as_version=4)
    typed = 0
    for cell in nb.cells:
        if cell.cell_type == "code" and REPLACE.search(cell.source):
            cell.source, n = REPLACE.subn(
                lambda m: f"{m['indent']}{m['name']} = {answer_of(path.name[:2], m['name'])}"
                          f"{m['comment']}", cell.source)
            typed += n
    return nb, typed


def _runs_kernels(lesson):
    """Whether the lesson's exercises judge kernels on the simulator (the runs that take tens of
    seconds: marked slow)."""
    bank = questions()
    return any(getattr(bank[q].kind, "proxy_judge", False) for q in lesson_questions(lesson))


def _run(nb, folder, name):
    path = Path(folder) / name
    nbformat.write(nb, path)
    return notebook_run.execute(path)


def test_typing_the_answers_into_an_exercise_gives_the_solutions_code():
    """Every exercise, answers typed: the solutions notebook's code with only the markers as
    comments (so the suite's run of solutions/ is also the run of every typed exercise)."""
    for path in EXERCISES:
        typed = typed_exercise(path)
        solution = nbformat.read(ROOT / "solutions" / path.name, as_version=4)
        for mine, theirs in zip(typed.cells, solution.cells, strict=True):
            if mine.cell_type == "code":
                expected = "\n".join(line.replace(assign.BEGIN, "# YOUR CODE HERE")
                                     for line in theirs.source.split("\n")
                                     if line.strip() != assign.END)
                assert mine.source == expected, path.name


@pytest.mark.parametrize("path", [pytest.param(p, id=p.stem, marks=[pytest.mark.slow]
                                               if _runs_kernels(p.name[:2]) else [])
                                  for p in EXERCISES])
def test_an_exercise_with_its_answers_typed_in_runs_to_the_end(path, tmp_path):
    nb = _run(typed_exercise(path), tmp_path, path.name)
    printed = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code"
                      for o in c.outputs)
    assert "[FAIL]" not in printed and "NOT ATTEMPTED" not in printed


def test_every_lesson_that_says_replace_is_found():
    lessons = sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb"))
    counts = {p.name: typed_lesson(p)[1] for p in lessons}
    assert counts["00_start_here.ipynb"] == 1
    for path in lessons:          # no "replace ... by your answer" this pattern does not type
        text = "".join(c.source for c in nbformat.read(path, as_version=4).cells
                       if c.cell_type == "code")
        assert text.count("by your answer") == counts[path.name], path.name


@pytest.mark.parametrize("answer", ["right", "wrong"])
def test_the_lesson_00_warm_up_cell_stays_green_for_any_answer(answer):
    """The cell itself, run as the student would after typing (the whole lesson runs below)."""
    nb, _ = typed_lesson(ROOT / "notebooks" / "00_start_here.ipynb",
                         answer_of=_solution_value if answer == "right" else lambda *_: "1.0")
    cell = next(c for c in nb.cells if c.cell_type == "code" and "by your answer" in c.source)
    namespace = {}
    exec(cell.source, namespace)
    assert namespace["r"].status == ("pass" if answer == "right" else "fail")


def test_a_lesson_with_its_answers_typed_in_runs_to_the_end(tmp_path):
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb")):
        nb, typed = typed_lesson(path)
        if typed:
            ran = _run(nb, tmp_path, path.name)
            assert any("[PASS]" in o.get("text", "") for c in ran.cells if c.cell_type == "code"
                       and "by your answer" in c.source for o in c.outputs)
