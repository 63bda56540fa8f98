"""Gradebooks an LMS imports: a column per lesson (its points), every student of the roster or
the run (0 for a lesson with no notebook), each identified the way that LMS matches students.

- Canvas (``gradebook-canvas.csv``): Canvas's Gradebook import reads the layout of its own
  export: the columns ``Student``, ``ID``, ``SIS User ID``, ``SIS Login ID``, ``Section``, then
  one per assignment, and a second row whose ``Student`` cell reads ``Points Possible`` and
  holds each assignment's points; students are matched by ``ID`` (the Canvas user id) or the SIS
  ids, a new column name makes a new assignment. (Canvas Instructor Guide, "How do I import
  grades in the Gradebook?", community.canvaslms.com/t5/Instructor-Guide/How-do-I-import-grades-
  in-the-Gradebook/ta-p/807.)
- Moodle (``gradebook-moodle.csv``): Moodle's "Import grades from CSV" maps one identifying
  column (``Email address`` or ``ID number``, matched to the user's email or idnumber) and any
  grade columns to grade items, chosen on its import page (docs.moodle.org/en/Grade_import).
  ``Identifier`` carries ``Participant N`` from a Moodle assignment download.
- Generic (``grades-lms.csv``): student, id, email, the lessons, the total and the percent.
"""
from . import report
from .points import show


def _columns(grades):
    """([(lesson, points possible)], [report.Student])."""
    return list(report.lessons(grades).items()), report.students(grades)


def _rows(grades, people):
    """(lesson columns, [(Identity, {lesson: points}, total)]) for everyone, in name order."""
    lessons, students = _columns(grades)
    scored = {s.name: s for s in students}
    rows = []
    for student, who in sorted(people.items()):
        mine = scored.get(student)
        got = {l: (mine.lessons.get(l, 0) if mine else 0) for l, _ in lessons}
        rows.append((who, got, sum(got.values())))
    return lessons, rows


def assignment(lesson):
    """The gradebook column of a lesson."""
    return f"gemmlab lesson {lesson}"


def canvas(grades, people):
    """Canvas's import CSV (see the module's docstring)."""
    lessons, rows = _rows(grades, people)
    header = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
    out = [header + [assignment(l) for l, _ in lessons],
           ["Points Possible", "", "", "", ""] + [show(p) for _, p in lessons]]
    out += [[who.shown, who.id, who.sis_user_id, who.sis_login_id, who.section]
            + [show(got[l]) for l, _ in lessons] for who, got, _ in rows]
    return report.csv_rows(out)


def moodle(grades, people):
    """Moodle's grade import CSV (see the module's docstring)."""
    lessons, rows = _rows(grades, people)
    out = [["Email address", "ID number", "Identifier", "Full name"]
           + [f"{assignment(l)} (of {show(p)})" for l, p in lessons]
           + [f"gemmlab total (of {show(sum(p for _, p in lessons))})"]]
    out += [[who.email, who.sis_user_id, f"Participant {who.participant}" if who.participant
             else "", who.shown]
            + [show(got[l]) for l, _ in lessons] + [show(total)] for who, got, total in rows]
    return report.csv_rows(out)


def generic(grades, people):
    """A row per student: folder name, LMS id, email, points per lesson, total, percent; a last
    column flags :func:`~gemmlab_grader.report.lookalikes`, if any."""
    lessons, rows = _rows(grades, people)
    possible, twins = sum(p for _, p in lessons), report.lookalikes(grades)
    out = [["student", "id", "email"] + [f"lesson {l} (of {show(p)})" for l, p in lessons]
           + [f"total (of {show(possible)})", "percent"] + (["check"] if twins else [])]
    out += [[who.student, who.id, who.email] + [show(got[l]) for l, _ in lessons]
            + [show(total), f"{100 * total / possible:.1f}" if possible else "-"]
            + ([twins.get(who.student, "")] if twins else []) for who, got, total in rows]
    return report.csv_rows(out)


def missing_ids(people):
    """A warning naming the students the LMS cannot match (no id, email or SIS id), or ''."""
    lost = [p.student for p in people.values()
            if not (p.id or p.email or p.sis_user_id or p.sis_login_id or p.participant)]
    if not lost:
        return ""
    return (f"{len(lost)} student(s) have no LMS id or email, so an LMS cannot match their "
            f"gradebook rows: {', '.join(report.printable(s, 40) for s in lost[:5])}"
            f"{' ...' if len(lost) > 5 else ''}; give --roster FILE (student,id,email)")
