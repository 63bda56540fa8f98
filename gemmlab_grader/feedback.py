"""Feedback one student can be sent: ``students/<name>.html`` and ``students/<name>.txt`` in the
output folder, each naming every question of the student's notebooks with its verdict, its
points and the feedback, the notes on each notebook, and the student's total; nothing about
anyone else (a note that compares the name with a classmate's stays in the instructor's reports).
"""
import hashlib
import html
import re

from gemmlab.judging import FAIL, NOT_ATTEMPTED, PASS

from . import report
from .points import show

FOLDER = "students"
_CLASS = {PASS: "pass", FAIL: "fail", NOT_ATTEMPTED: "none"}
_STYLE = ("body { font: 15px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 60em; } "
          "td, th { padding: 0.15em 0.6em; border-bottom: 1px solid #ddd; text-align: left; "
          "vertical-align: top; } .pass { color: #176b3a; } .fail { color: #a11; } "
          ".none { color: #777; } .notes { color: #a11; }")


def file_stem(student):
    """A file name for ``student``: the safe characters of the name and a hash of all of it,
    so that two names never share a file and no name reaches outside the folder."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", student).strip("._")[:60] or "student"
    return f"{safe}-{hashlib.sha256(student.encode('utf-8', 'surrogateescape')).hexdigest()[:8]}"


def _theirs(grades, student):
    """The student's notebooks, and each one's notes without those about classmates."""
    twins = report.lookalikes(grades).get(student)
    mine = sorted((g for g in grades if g.student == student), key=lambda g: g.notebook)
    return [(g, [n for n in g.notes if n != twins]) for g in mine]


def _lines(feedback):
    """A feedback text's lines, each escaped (:func:`report.printable`): the line breaks of a
    question's prompt (its options, one a line) stay line breaks, not a printed ``\\n``."""
    return [report.printable(line) for line in str(feedback).split("\n")]


def text(grades, student, shown=None):
    """The plain-text feedback of ``student`` (``shown``: the name to print, e.g. the LMS's)."""
    mine = _theirs(grades, student)
    score, possible = sum(g.score for g, _ in mine), sum(g.possible for g, _ in mine)
    lines = [f"gemmlab feedback for {report.printable(shown or student)}",
             f"total: {show(score)} of {show(possible)} points", ""]
    for g, notes in mine:
        lines.append(f"{report.printable(g.notebook)} (lesson {g.lesson or '?'}): "
                     f"{show(g.score)} of {show(g.possible)} points")
        lines += [f"  note: {report.printable(n)}" for n in notes]
        for q, status in g.results.items():
            lines.append(f"  {q}: {status} ({show(g.earned(q))}/{show(g.worth(q))} points)")
            lines += [f"      {line}" for line in _lines(g.feedback.get(q, ""))]
        lines.append("")
    return "\n".join(lines)


def page(grades, student, shown=None):
    """The same as :func:`text`, as one HTML page (every text escaped, no script)."""
    e = lambda t: html.escape(report.printable(t), quote=True)     # noqa: E731
    mine = _theirs(grades, student)
    score, possible = sum(g.score for g, _ in mine), sum(g.possible for g, _ in mine)
    out = [f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>gemmlab '
           f"feedback</title><style>{_STYLE}</style></head><body>",
           f"<h1>Feedback for {e(shown or student)}</h1>",
           f"<p>Total: <b>{show(score)}</b> of {show(possible)} points</p>"]
    for g, notes in mine:
        out.append(f"<h2>{e(g.notebook)} (lesson {e(g.lesson or '?')}): {show(g.score)} of "
                   f"{show(g.possible)} points</h2>")
        if notes:
            out.append('<ul class="notes">' + "".join(f"<li>{e(n)}</li>" for n in notes) + "</ul>")
        out.append("<table><tr><th>question</th><th>verdict</th><th>points</th><th>feedback"
                   "</th></tr>")
        for q, status in g.results.items():
            out.append(f'<tr><td>{e(q)}</td><td class="{_CLASS.get(status, "")}">{e(status)}'
                       f"</td><td>{show(g.earned(q))}/{show(g.worth(q))}</td>"
                       f"<td>{'<br>'.join(e(line) for line in _lines(g.feedback.get(q, '')))}"
                       f"</td></tr>")
        out.append("</table>")
    return "\n".join(out) + "\n</body></html>\n"
