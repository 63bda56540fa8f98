"""The grades as people read them: a summary of students x lessons (100 columns wide for the 16
lessons), a table of questions per lesson, a CSV of every notebook, a CSV an LMS imports (a row
per student, a column per lesson) and the JSON; :mod:`gemmlab_grader.publish` adds the HTML page.

Names, error texts and feedback come from submissions: untrusted. Every report but the JSON shows
escaped (``\\x1b``, ``\\u202e``, ``\\udce9``) each character that is not plainly visible (control,
format and other invisible characters, spaces other than U+0020, the lone surrogates of a file
name's undecodable bytes), so nothing redraws the terminal, every writer can encode it, and two
names that differ look different. A CSV cell a spreadsheet would read as a formula gets a leading
``'``; the JSON is ASCII, so :mod:`~gemmlab_grader.merge` reads every name back exactly; names
equal once the invisible characters are dropped and NFKC applied are flagged (:func:`lookalikes`).
"""
import csv
import io
import json
import unicodedata
from collections import namedtuple

from gemmlab.judging import FAIL, NOT_ATTEMPTED, PASS

from .points import show

_SHORT = {PASS: "pass", FAIL: "FAIL", NOT_ATTEMPTED: "-"}
_UNSAFE = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"}
# default-ignorable characters outside those categories: drawn as nothing
_IGNORABLE = ({0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0}
              | set(range(0x180B, 0x1810)) | set(range(0xFE00, 0xFE10))
              | set(range(0xE0100, 0xE01F0)))


def invisible(c):
    """Whether the character ``c`` is not plainly visible (see the module's docstring)."""
    return c != " " and (unicodedata.category(c) in _UNSAFE or ord(c) in _IGNORABLE)


def printable(text, width=None):
    """``text`` with every character that is not plainly visible escaped, cut to ``width``."""
    out = "".join(c.encode("unicode_escape").decode("ascii") if invisible(c) else c
                  for c in str(text))
    return out if width is None or len(out) <= width else out[:width - 3] + "..."


def lookalikes(grades):
    """{student: a note naming the others whose names look the same}, for the students who have
    such a twin (``honest01`` and ``honest01`` + U+200B)."""
    groups, seen = {}, lambda text: "".join(c for c in text if not invisible(c) or c.isspace())
    for student in dict.fromkeys(g.student for g in grades):     # as a reader sees it: NFKC
        groups.setdefault(seen(unicodedata.normalize("NFKC", seen(student))), []).append(student)
    return {s: "the student's name looks the same as "
            + ", ".join(repr(printable(o, 60)) for o in group if o != s)
            + " once invisible characters are dropped: check which student is which"
            for group in groups.values() if len(group) > 1 for s in group}


def flag_lookalikes(grades):
    """Add its :func:`lookalikes` note to each notebook of a student with a twin, once."""
    notes = lookalikes(grades)
    for g in grades:
        if g.student in notes and notes[g.student] not in g.notes:
            g.notes.append(notes[g.student])


# --- the class as a whole -----------------------------------------------------------------------

Student = namedtuple("Student", "name lessons score possible percent noted")


def lessons(grades):
    """{lesson: its points}, in lesson order, for the lessons graded."""
    found = {}
    for g in grades:
        if g.lesson:
            found[g.lesson] = max(found.get(g.lesson, 0), g.possible)
    return dict(sorted(found.items()))


def students(grades):
    """A :class:`Student` per student, in name order: {lesson: points of its notebook (the one
    that counts, see :mod:`~gemmlab_grader.choose`)}, the points in all, the points possible
    (every lesson graded), the percent, how many of the student's notebooks have notes."""
    possible = sum(lessons(grades).values())
    scored, noted = {}, {}
    for g in grades:
        mine = scored.setdefault(g.student, {})
        if g.lesson:
            mine[g.lesson] = max(mine.get(g.lesson, 0), g.score)
        noted[g.student] = noted.get(g.student, 0) + bool(g.notes)
    rows = []
    for name in sorted(scored):
        score = sum(scored[name].values())
        percent = f"{100 * score / possible:.1f}" if possible else "-"
        rows.append(Student(name, scored[name], score, possible, percent, noted[name]))
    return rows


def summary(grades):
    """Students x lessons: points per lesson ('-': no notebook), the total, the percentage, and
    how many of the student's notebooks have notes (see the lesson tables)."""
    sizes = lessons(grades)
    possible = sum(sizes.values())
    # the empty column puts two spaces before the totals
    rows = [["student", *sizes, "", "points", "%", "notes"],
            ["(points)", *map(show, sizes.values()), "", f"/{show(possible)}", "", ""]]
    rows += [[printable(s.name, 24), *(show(s.lessons[l]) if l in s.lessons else "-"
                                       for l in sizes), "",
              f"{show(s.score)}/{show(possible)}", s.percent, str(s.noted or "")]
             for s in students(grades)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join(" ".join(c.rjust(w) if i else c.ljust(w)
                              for i, (c, w) in enumerate(zip(row, widths, strict=True))).rstrip()
                     for row in rows)


def table(grades):
    """A row per notebook, a column per question (pass / FAIL / - not attempted; without the
    lesson number when all are of one lesson), its points and a note."""
    cols = list(dict.fromkeys(q for g in grades for q in g.results))
    one_lesson = len({q[:2] for q in cols}) == 1
    header = (["student", "notebook"] + [q[3:] if one_lesson else q for q in cols]
              + ["points", "note"])
    rows = [[printable(g.student, 40), printable(g.notebook, 40)]
            + [_SHORT.get(g.results.get(q), "") for q in cols]
            + [f"{show(g.score)}/{show(g.possible)}", printable(g.note, 70)] for g in grades]
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
             for row in [header] + rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def lesson_tables(grades):
    """:func:`table` for each lesson, then the notebooks that answer none."""
    parts = []
    for lesson, worth in lessons(grades).items():
        mine = sorted((g for g in grades if g.lesson == lesson), key=lambda g: g.notebook)
        parts.append(f"lesson {lesson} ({max(len(g.results) for g in mine)} questions, "
                     f"{show(worth)} points)\n{table(mine)}")
    loose = [g for g in grades if not g.lesson]
    if loose:
        parts.append(f"notebooks of no lesson\n{table(loose)}")
    return "\n\n".join(parts)


def text(grades):
    """summary.txt: the summary, then the lesson tables (wider than a terminal: the grader
    prints only the summary)."""
    if not grades:
        return "no notebooks graded"
    flag_lookalikes(grades)
    return f"{summary(grades)}\n\n{lesson_tables(grades)}"


# --- files ----------------------------------------------------------------------------------------

def cell(text):
    """A CSV cell: escaped (:func:`printable`), a would-be formula defused."""
    text = printable(text)
    return "'" + text if text[:1] in ("=", "+", "-", "@") and text != "-" else text


def csv_rows(rows):
    """``rows`` as CSV, each cell escaped (:func:`printable`) and a would-be formula defused."""
    buffer = io.StringIO()
    csv.writer(buffer).writerows([cell(c) for c in row] for row in rows)
    return buffer.getvalue()


def csv_text(grades):
    """A row per notebook: its questions' verdicts, passed, total, points, note."""
    cols = list(dict.fromkeys(q for g in grades for q in g.results))
    return csv_rows([["student", "notebook", "lesson"] + cols
                 + ["passed", "total", "points", "possible", "note"]]
                + [[g.student, g.notebook, g.lesson] + [g.results.get(q, "") for q in cols]
                   + [g.passed, len(g.results), show(g.score), show(g.possible), g.note]
                   for g in grades])


def json_text(grades, run_info):
    """Everything, as ASCII JSON (names exactly as found, in ``\\u`` escapes)."""
    return json.dumps(dict(run_info, notebooks=[g.as_dict() for g in grades]), indent=2) + "\n"
