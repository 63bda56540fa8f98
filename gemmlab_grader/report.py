"""The grades as a terminal table, CSV and JSON.

Everything that comes from a submission (names, error texts, feedback) is untrusted text: in the
table, control and formatting characters (carriage returns, ANSI escapes, bidi overrides) are
shown escaped (``\\x1b``, ``\\r``, ``\\u202e``) so they cannot redraw the terminal; in the CSV a
cell that a spreadsheet would read as a formula (``=``, ``+``, ``-``, ``@``) gets a leading ``'``.
Reports are written to a fresh temporary file and renamed into place, never through a link.
"""
import csv
import io
import json
import unicodedata
from pathlib import Path

from gemmlab.grading.files import write_file
from gemmlab.judging import FAIL, NOT_ATTEMPTED, PASS

_SHORT = {PASS: "pass", FAIL: "FAIL", NOT_ATTEMPTED: "-"}
_UNSAFE = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}


def printable(text, width=None):
    """``text`` with every control/format character escaped, cut to ``width`` characters."""
    out = "".join(c if unicodedata.category(c) not in _UNSAFE
                  else c.encode("unicode_escape").decode("ascii") for c in str(text))
    return out if width is None or len(out) <= width else out[:width - 3] + "..."


def _columns(grades):
    return list(dict.fromkeys(q for g in grades for q in g.results))


def table(grades, note_width=70):
    """One row per notebook, one column per question (pass / FAIL / - not attempted), the
    total and a note."""
    cols = _columns(grades)
    header = ["student", "notebook"] + cols + ["passed", "note"]
    rows = [[printable(g.student, 40), printable(g.notebook, 40)]
            + [_SHORT.get(g.results.get(q), "") for q in cols]
            + [f"{g.passed}/{len(g.results)}", printable(g.note, note_width)] for g in grades]
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
             for row in [header] + rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _cell(text):
    text = str(text)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def csv_text(grades):
    cols = _columns(grades)
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["student", "notebook", "lesson"] + cols + ["passed", "total", "note"])
    for g in grades:
        writer.writerow([_cell(g.student), _cell(g.notebook), g.lesson]
                        + [g.results.get(q, "") for q in cols]
                        + [g.passed, len(g.results), _cell(g.note)])
    return buffer.getvalue()


def write_reports(grades, out, run_info):
    """grades.csv and grades.json (``run_info``: seed, protections, warnings...) in ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if out.is_symlink() or not out.is_dir():
        raise NotADirectoryError(f"{out} is not a plain folder")
    write_file(out / "grades.csv", csv_text(grades))
    rows = [g.as_dict() for g in grades]
    write_file(out / "grades.json", json.dumps(dict(run_info, notebooks=rows), indent=2) + "\n")
    return out / "grades.csv", out / "grades.json"
