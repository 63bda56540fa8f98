"""``gl.progress()`` and ``gemmlab progress [DIR]``: each lesson's questions passed, failed, not
attempted and revealed, from the student's own notebooks: a table that fits 100 columns and a
bar per lesson.

The verdicts are the grader's, judged on the student's machine (trusted: their own work) by
``gemmlab progress DIR --json``, which hands over to the grader's command (gemmlab never imports
the grader); the reveals come from the student's record (:mod:`gemmlab.grading.student`).
"""
import json
import subprocess
import sys
from pathlib import Path

from ..judging import FAIL, NOT_ATTEMPTED, PASS
from . import student

COLUMNS = ("passed", "failed", "not attempted", "revealed")
BAR = 40


def verdicts(work, lessons=()):
    """{lesson: {question id: status}} for the student folder ``work``, from the grader."""
    chosen = [arg for lesson in lessons for arg in ("--lesson", lesson)]
    done = subprocess.run([sys.executable, "-m", "gemmlab", "progress", str(work), "--json",
                           *chosen], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(done.stderr.strip() or f"gemmlab progress exited {done.returncode}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def tally(found, revealed):
    """[(lesson, passed, failed, not attempted, revealed)] in lesson order."""
    rows = []
    for lesson, statuses in sorted(found.items()):
        counts = [sum(s == want for s in statuses.values()) for want in (PASS, FAIL, NOT_ATTEMPTED)]
        rows.append((lesson, *counts, sum(q in revealed for q in statuses)))
    return rows


def table(rows):
    """The rows as text, at most 100 columns wide: counts, then a bar (# passed, x failed, .
    not attempted)."""
    lines = [f"{'lesson':6}  {'passed':>6}  {'failed':>6}  {'not att.':>8}  {'revealed':>8}  "
             f"{'# passed  x failed  . not attempted':{BAR}}"]
    for lesson, passed, failed, todo, shown in rows:
        total = max(passed + failed + todo, 1)
        cells = [round(BAR * n / total) for n in (passed, failed)]
        bar = "#" * cells[0] + "x" * cells[1]
        lines.append(f"{lesson:6}  {passed:6}  {failed:6}  {todo:8}  {shown:8}  "
                     f"{bar + '.' * (BAR - len(bar))}")
    return "\n".join(lines)


def figure(rows):
    """A horizontal stacked bar per lesson (passed, failed, not attempted; revealed marked)."""
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8, 0.35 * len(rows) + 1.2))
    labels = [lesson for lesson, *_ in rows]
    left = [0] * len(rows)
    for index, (name, color) in enumerate(zip(COLUMNS[:3], ("tab:green", "tab:red", "lightgray"),
                                              strict=True)):
        counts = [row[1 + index] for row in rows]
        ax.barh(labels, counts, left=left, color=color, label=name)
        left = [a + b for a, b in zip(left, counts, strict=True)]
    for y, row in enumerate(rows):
        if row[4]:
            ax.text(left[y] + 0.2, y, f"{row[4]} revealed", va="center", fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("questions")
    ax.set_ylabel("lesson")
    ax.set_title("Your progress")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    return fig


def progress(work=None, lessons=(), draw=True):
    """Print the table of the student folder ``work`` (default: the one this notebook is in),
    draw the bars, and return the rows."""
    work = Path(work) if work is not None else student.folder()
    if work is None:
        raise ValueError("this notebook is not in a student folder: give the folder, "
                         "gl.progress('work')")
    rows = tally(verdicts(work, lessons), set(student.load()["revealed"]
                                              if work == student.folder() else
                                              revealed_in(work)))
    print(table(rows))
    if draw:
        figure(rows)
    return rows


def revealed_in(work):
    try:
        return json.loads((Path(work) / student.PROGRESS).read_text())["revealed"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
