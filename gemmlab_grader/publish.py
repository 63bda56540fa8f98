"""Writing a run's reports into the output folder: those of :mod:`gemmlab_grader.report` and an
HTML page made here: the summary, each question's pass rate as a bar chart, and each student's
feedback and notes. The page is one file with no script and nothing fetched from elsewhere; every
text from a submission in it is escaped (``<script>`` in a student's name shows as text). Each
file is written whole, through a new file renamed into place, never through a link.
"""
import html
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from gemmlab.grading.files import write_file
from gemmlab.judging import FAIL, NOT_ATTEMPTED, PASS

from . import feedback, gradebook, report, roster
from .points import show

FILES = ("summary.txt", "grades.csv", "grades-lms.csv", "gradebook-canvas.csv",
         "gradebook-moodle.csv", "grades.json", "grades.html")
_CLASS = {PASS: "pass", FAIL: "fail", NOT_ATTEMPTED: "none"}
_STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 70em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { padding: 0.15em 0.6em; border-bottom: 1px solid #ddd; text-align: left;
         vertical-align: top; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.bar { background: #eee; width: 16em; height: 0.9em; display: inline-block; }
.bar span { background: #3a7; height: 100%; display: block; }
.pass { color: #176b3a; } .fail { color: #a11; font-weight: bold; } .none { color: #777; }
.notes { color: #a11; } .warn { background: #fff4d6; padding: 0.2em 0.5em; }
details { margin: 0.3em 0; } summary { cursor: pointer; }
"""


def _e(text, width=None):
    """Untrusted text as HTML: control characters shown escaped, then every markup character."""
    return html.escape(report.printable(text, width), quote=True)


def _summary(grades):
    sizes = report.lessons(grades)
    out = ["<table><tr><th>student</th>"
           + "".join(f"<th>{_e(l)}<br><small>/{show(n)}</small></th>" for l, n in sizes.items())
           + f"<th>points<br><small>/{show(sum(sizes.values()))}</small></th><th>%</th></tr>"]
    for s in report.students(grades):
        cells = "".join(f'<td class="n">{show(s.lessons[l]) if l in s.lessons else "-"}</td>'
                        for l in sizes)
        out.append(f'<tr><td><a href="#{_anchor(s.name)}">{_e(s.name, 60)}</a></td>{cells}'
                   f'<td class="n">{show(s.score)}</td><td class="n">{s.percent}</td></tr>')
    return "\n".join(out) + "</table>"


def _anchor(student):
    return "s-" + student.encode("utf-8", "surrogateescape").hex()


def _pass_rates(grades):
    """Per lesson, a bar per question: the share of its notebooks that passed it."""
    out = []
    for lesson in report.lessons(grades):
        mine = [g for g in grades if g.lesson == lesson]
        out.append(f"<h3>Lesson {_e(lesson)} ({len(mine)} notebooks)</h3><table>")
        for q in dict.fromkeys(q for g in mine for q in g.results):
            passed = sum(g.results.get(q) == PASS for g in mine)
            share = passed / len(mine)
            out.append(f'<tr><td>{_e(q)}</td><td><span class="bar" title="{share:.0%}">'
                       f'<span style="width: {100 * share:.1f}%"></span></span></td>'
                       f'<td class="n">{passed}/{len(mine)}</td><td class="n">{share:.0%}</td></tr>')
        out.append("</table>")
    return "\n".join(out)


def _feedback(grades):
    """Per student, each notebook: its notes, then each question's verdict and feedback."""
    out, possible = [], sum(report.lessons(grades).values())
    for s in report.students(grades):
        out.append(f'<details id="{_anchor(s.name)}"><summary><b>{_e(s.name, 80)}</b>: '
                   f'{show(s.score)}/{show(possible)} points</summary>')
        for g in sorted((g for g in grades if g.student == s.name), key=lambda g: g.notebook):
            out.append(f"<h4>{_e(g.notebook, 120)}: {show(g.score)}/{show(g.possible)} "
                       f"points</h4>")
            if g.notes:
                out.append('<ul class="notes">' + "".join(f"<li>{_e(n, 600)}</li>"
                                                          for n in g.notes) + "</ul>")
            out.append("<table>" + "".join(
                f'<tr><td>{_e(q)}</td><td class="{_CLASS.get(s, "")}">{_e(s)}</td>'
                f'<td>{_e(g.feedback.get(q, ""), 2000)}</td></tr>' for q, s in g.results.items())
                + "</table>")
        out.append("</details>")
    return "\n".join(out)


def page(grades, run_info):
    """The HTML page of a run (see the module's docstring)."""
    facts = ["sandbox" if run_info.get("sandbox") else "NO sandbox",
             f"{len(grades)} notebooks", f"{len(report.students(grades))} students"]
    if run_info.get("shards"):
        facts.append(f"merged from {len(run_info['shards'])} shards")
    warnings = "".join(f'<p class="warn">{_e(w, 1000)}</p>'
                       for w in run_info.get("warnings", []))
    return (f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>gemmlab grades</title><style>{_STYLE}</style></head><body>\n"
            f"<h1>Grades</h1><p>{' &middot; '.join(facts)} &middot; written "
            f"{time.strftime('%Y-%m-%d %H:%M')}</p>{warnings}\n"
            f"<h2>Summary</h2>\n{_summary(grades)}\n"
            f"<h2>Pass rate per question</h2>\n{_pass_rates(grades)}\n"
            f"<h2>Feedback per student</h2>\n{_feedback(grades)}\n</body></html>\n")


def _folder(out):
    """(``out``, '') if it is (or can be made) a plain folder, else (a fresh one beside it, why)."""
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        if not out.is_symlink() and out.is_dir():
            return out, ""
    except OSError:
        pass
    other = Path(tempfile.mkdtemp(prefix=f"{out.name}-{time.strftime('%Y%m%d-%H%M%S')}-",
                                  dir=out.parent))
    other.chmod(0o755)
    return other, f"{out} is not a folder this run can write: the reports went to {other}"


def write_all(grades, out, run_info, warn=None, people=None):
    """Every report (:data:`FILES`) into ``out``, or into the folder :func:`_folder` finds, each
    on its own, then each student's feedback (:mod:`~gemmlab_grader.feedback`) into
    ``out/students``: one that fails is named through ``warn`` (default: standard error) and in
    the warnings of those made after it (the JSON and the page come last). ``people``: {student:
    roster.Identity} for the gradebooks (default: the students graded, with no LMS ids).
    Returns the paths written."""
    warn = warn or (lambda text: print(f"gemmlab grade: {text}", file=sys.stderr))
    folder, moved = _folder(out)
    warnings = list(run_info.get("warnings", [])) + ([moved] if moved else [])
    if moved:
        warn(moved)
    people = people or roster.combine({}, {}, {g.student for g in grades})
    report.flag_lookalikes(grades)
    makers = {"summary.txt": lambda: report.text(grades) + "\n",
              "grades.csv": lambda: report.csv_text(grades),
              "grades-lms.csv": lambda: gradebook.generic(grades, people),
              "gradebook-canvas.csv": lambda: gradebook.canvas(grades, people),
              "gradebook-moodle.csv": lambda: gradebook.moodle(grades, people),
              "grades.json": lambda: report.json_text(grades, dict(run_info, warnings=warnings)),
              "grades.html": lambda: page(grades, dict(run_info, warnings=warnings))}
    written = []
    for name, make in makers.items():
        try:
            write_file(folder / name, make(), mode=0o644)
            written.append(folder / name)
        except Exception as exc:  # noqa: BLE001 one report's failure must not take the others
            failure = (f"{name} could not be written ({type(exc).__name__}: "
                       f"{report.printable(exc, 200)})")
            warnings.append(failure)
            warn(failure)
    return written + _write_students(grades, folder / feedback.FOLDER, people, warn)


def _write_students(grades, folder, people, warn):
    """Each graded student's feedback files into ``folder``; returns the paths written."""
    written = []
    try:
        folder.mkdir(exist_ok=True)
        if folder.is_symlink() or not folder.is_dir():
            raise NotADirectoryError(f"{folder} is not a folder")
    except OSError as exc:
        warn(f"the students' feedback could not be written ({report.printable(exc, 200)})")
        return written
    for student in sorted({g.student for g in grades}):
        shown = people[student].shown if student in people else student
        stem = folder / feedback.file_stem(student)
        for suffix, make in ((".html", feedback.page), (".txt", feedback.text)):
            try:
                write_file(stem.with_suffix(suffix), make(grades, student, shown), mode=0o644)
                written.append(stem.with_suffix(suffix))
            except Exception as exc:  # noqa: BLE001 one student's file must not stop the others
                warn(f"{stem.name}{suffix} could not be written ({type(exc).__name__}: "
                     f"{report.printable(exc, 200)})")
    return written


def finish(grades, out, run_info, people=None):
    """How a run ends (grading or merging): the summary printed (the tables per lesson are in
    summary.txt, wider than a terminal), every report written (:func:`write_all`), the run's
    warnings and the files written listed."""
    report.flag_lookalikes(grades)
    print(report.summary(grades) if grades else "no notebooks graded")
    written = write_all(grades, out, run_info, people=people)
    for warning in run_info.get("warnings", []):
        print(f"WARNING: {report.printable(warning, 300)}", file=sys.stderr)
    students = [p for p in written if p.parent.name == feedback.FOLDER]
    reports = [p for p in written if p not in students]
    if reports:
        print(f"\nwritten into {reports[0].parent}/:")
        print(textwrap.fill(", ".join(p.name for p in reports), 98, initial_indent="  ",
                            subsequent_indent="  "))
    if students:
        print(f"  {feedback.FOLDER}/: {len(students)} files, each student's feedback (one .html, "
              f"one .txt)")
