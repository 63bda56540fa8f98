"""The grades as people read them: a summary of students x lessons (within 100 columns for the
16 lessons), a table of questions per lesson, a CSV of every notebook's questions, a CSV an LMS
imports (a row per student, a column per lesson, a total), and the JSON with everything;
:mod:`gemmlab_grader.publish` adds the HTML page and writes them all.

Everything that comes from a submission (names, error texts, feedback) is untrusted text. In
every report but the JSON, each character that is not plainly visible is shown escaped
(``\\x1b``, ``\\r``, ``\\u202e``, ``\\u200b``): control and format characters (carriage
returns, ANSI escapes, bidi overrides, zero-width spaces), other invisible ones (variation
selectors, Hangul fillers), spaces other than U+0020, and the lone surrogates that stand for a
file name's undecodable bytes (``\\udce9``), which no UTF-8 file can hold. So nothing can redraw
the terminal, no writer meets a character it cannot encode, and two names differ visibly when
they differ. In the CSVs a cell that a spreadsheet would read as a formula (``=``, ``+``, ``-``,
``@``) gets a leading ``'``; the HTML page escapes markup too; the JSON is ASCII (``\\u`` escapes),
so that :mod:`~gemmlab_grader.merge` reads every name back exactly.

Two students whose names are equal once the invisible characters are dropped and NFKC is applied
(``honest01`` and ``honest01`` + U+200B) are flagged on both rows (:func:`flag_lookalikes`).
"""
import csv
import io
import json
import resource
import unicodedata

from gemmlab.judging import FAIL, NOT_ATTEMPTED, PASS

_SHORT = {PASS: "pass", FAIL: "FAIL", NOT_ATTEMPTED: "-"}
_UNSAFE = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"}
# default-ignorable characters outside those categories: drawn as nothing
_IGNORABLE = ({0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0}
              | set(range(0x180B, 0x1810)) | set(range(0xFE00, 0xFE10))
              | set(range(0xE0100, 0xE01F0)))
NAME_WIDTH = 24


def invisible(c):
    """Whether the character ``c`` is not plainly visible (see the module's docstring)."""
    return c != " " and (unicodedata.category(c) in _UNSAFE or ord(c) in _IGNORABLE)


def printable(text, width=None):
    """``text`` with every character that is not plainly visible escaped, cut to ``width``
    characters."""
    out = "".join(c.encode("unicode_escape").decode("ascii") if invisible(c) else c
                  for c in str(text))
    return out if width is None or len(out) <= width else out[:width - 3] + "..."


def lookalike_key(name):
    """``name`` as a reader sees it: its invisible characters dropped, NFKC applied."""
    visible = "".join(c for c in str(name) if not invisible(c) or c.isspace())
    return "".join(c for c in unicodedata.normalize("NFKC", visible)
                   if not invisible(c) or c.isspace())


def lookalikes(grades):
    """{student: the other students whose names look the same (:func:`lookalike_key`)}, for the
    students who have such a twin."""
    groups = {}
    for student in dict.fromkeys(g.student for g in grades):
        groups.setdefault(lookalike_key(student), []).append(student)
    return {s: [o for o in group if o != s] for group in groups.values() if len(group) > 1
            for s in group}


def lookalike_note(others):
    return ("the student's name looks the same as " + ", ".join(repr(printable(o, 60)) for o in others)
            + " once invisible characters are dropped: check which student is which")


def flag_lookalikes(grades):
    """Note on every notebook of a student with a lookalike name which names it resembles (once:
    calling it again adds nothing)."""
    twins = lookalikes(grades)
    for g in grades:
        if g.student in twins:
            note = lookalike_note(twins[g.student])
            if note not in g.notes:
                g.notes.append(note)


def peak_rss_mib():
    """The most memory this process has held at once, in MiB."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


# --- the class as a whole -----------------------------------------------------------------------

def lessons(grades):
    """{lesson: its number of questions}, in lesson order, for the lessons graded."""
    found = {}
    for g in grades:
        if g.lesson:
            found[g.lesson] = max(found.get(g.lesson, 0), len(g.results))
    return dict(sorted(found.items()))


def by_student(grades):
    """{student: {lesson: the notebook with most passed, if several}} in student order."""
    table = {}
    for g in sorted(grades, key=lambda g: (g.student, g.notebook)):
        row = table.setdefault(g.student, {})
        if g.lesson and (g.lesson not in row or g.passed > row[g.lesson].passed):
            row[g.lesson] = g
    return table


def totals(grades):
    """{student: (passed, out of, notebooks with notes)}: out of every lesson graded in the run
    (a lesson a student handed no notebook for counts 0)."""
    possible = sum(lessons(grades).values())
    noted = {}
    for g in grades:
        noted[g.student] = noted.get(g.student, 0) + bool(g.notes)
    return {student: (sum(g.passed for g in row.values()), possible, noted.get(student, 0))
            for student, row in by_student(grades).items()}


def percent_text(passed, possible):
    """'83.3' for 5 of 6, '-' when nothing could be passed."""
    return f"{100 * passed / possible:.1f}" if possible else "-"


def summary(grades, name_width=NAME_WIDTH):
    """Students x lessons: questions passed per lesson ('-': no notebook), the total, the
    percentage, and how many of the student's notebooks have notes (see the lesson tables)."""
    sizes, rows, sums = lessons(grades), by_student(grades), totals(grades)
    width = max([len("(questions)")] + [len(printable(s, name_width)) for s in rows])
    cols = {lesson: max(2, len(str(n))) for lesson, n in sizes.items()}
    possible = sum(sizes.values())
    tail = max(len(f"{possible}/{possible}"), len("passed"))

    def line(name, cells, total, percent, notes):
        return (f"{name:<{width}} " + " ".join(f"{c:>{cols[l]}}" for l, c in zip(cols, cells, strict=True))
                + f"  {total:>{tail}} {percent:>5} {notes:>5}").rstrip()

    out = [line("student", list(cols), "passed", "%", "notes"),
           line("(questions)", [str(n) for n in sizes.values()], f"/{possible}", "", "")]
    for student, row in rows.items():
        passed, _, noted = sums[student]
        cells = [str(row[l].passed) if l in row else "-" for l in cols]
        out.append(line(printable(student, name_width), cells, f"{passed}/{possible}",
                        percent_text(passed, possible), str(noted or "")))
    return "\n".join(out)


def table(grades, note_width=70):
    """One row per notebook, one column per question (pass / FAIL / - not attempted; the
    question's name without its lesson number when all are of one lesson), the total and a
    note."""
    cols = list(dict.fromkeys(q for g in grades for q in g.results))
    one_lesson = len({q[:2] for q in cols}) == 1
    header = (["student", "notebook"] + [q[3:] if one_lesson else q for q in cols]
              + ["passed", "note"])
    rows = [[printable(g.student, 40), printable(g.notebook, 40)]
            + [_SHORT.get(g.results.get(q), "") for q in cols]
            + [f"{g.passed}/{len(g.results)}", printable(g.note, note_width)] for g in grades]
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
             for row in [header] + rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def lesson_tables(grades):
    """:func:`table` for each lesson, then the notebooks that answer none."""
    parts = []
    for lesson, n in lessons(grades).items():
        mine = sorted((g for g in grades if g.lesson == lesson), key=lambda g: g.notebook)
        parts.append(f"lesson {lesson} ({n} questions)\n{table(mine)}")
    loose = [g for g in grades if not g.lesson]
    if loose:
        parts.append(f"notebooks of no lesson\n{table(loose)}")
    return "\n\n".join(parts)


def text(grades):
    """What the grader prints: the summary, then the lesson tables."""
    if not grades:
        return "no notebooks graded"
    flag_lookalikes(grades)
    return f"{summary(grades)}\n\n{lesson_tables(grades)}"


# --- files ----------------------------------------------------------------------------------------

def _cell(text):
    """A CSV cell: escaped (:func:`printable`), a would-be formula defused."""
    text = printable(text)
    return "'" + text if text[:1] in ("=", "+", "-", "@") and text != "-" else text


def _row(cells):
    return [_cell(c) for c in cells]


def csv_text(grades):
    """A row per notebook: its questions' verdicts, passed, total, note."""
    cols = list(dict.fromkeys(q for g in grades for q in g.results))
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(_row(["student", "notebook", "lesson"] + cols + ["passed", "total", "note"]))
    for g in grades:
        writer.writerow(_row([g.student, g.notebook, g.lesson]
                             + [g.results.get(q, "") for q in cols]
                             + [g.passed, len(g.results), g.note]))
    return buffer.getvalue()


def lms_csv(grades):
    """A row per student, a column per lesson (questions passed; 0 for a notebook not handed
    in), the total and the percentage: the points an LMS gradebook imports; and, when some
    students' names look alike, a last column that says so on each of their rows."""
    sizes, rows, sums = lessons(grades), by_student(grades), totals(grades)
    possible, twins = sum(sizes.values()), lookalikes(grades)
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(_row(["student"] + [f"lesson {l} (of {n})" for l, n in sizes.items()]
                         + [f"total (of {possible})", "percent"] + (["check"] if twins else [])))
    for student, row in rows.items():
        passed = sums[student][0]
        flag = [lookalike_note(twins[student]) if student in twins else ""] if twins else []
        writer.writerow(_row([student] + [row[l].passed if l in row else 0 for l in sizes]
                             + [passed, percent_text(passed, possible)] + flag))
    return buffer.getvalue()


def json_text(grades, run_info):
    """Everything, as ASCII JSON (names exactly as found, in ``\\u`` escapes)."""
    return json.dumps(dict(run_info, notebooks=[g.as_dict() for g in grades]), indent=2) + "\n"
