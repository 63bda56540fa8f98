"""``gemmlab grade SUBMISSIONS``: run every student notebook and tabulate its checks.

Each notebook runs in a temporary copy (the submission is never touched) with a per-cell timeout.
Every ``check()`` it makes is logged through ``GEMMLAB_GRADE_LOG``. A notebook that is not valid
JSON, raises, or hangs still gets a row: the questions it did not pass a check for are marked
"fail" with the reason, and grading goes on with the next notebook.

Layout: ``SUBMISSIONS/<student>/<notebook>.ipynb`` (the student is the folder) or
``SUBMISSIONS/<student-notebook>.ipynb`` (the student is the file name). The questions of a
notebook are those of the lesson whose number starts its file name (``01_...`` -> lesson 01), or
else those its cells pass to ``check("...")``.
"""
import csv
import json
import os
import re
import shutil
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellTimeoutError, DeadKernelError

from .bank import lesson_questions, questions
from .checker import FAIL, NOT_ATTEMPTED, PASS

_CHECK_CALL = re.compile(r"""check\(\s*["']([0-9]{2}\.[A-Za-z0-9_]+)["']""")


@dataclass
class NotebookGrade:
    student: str
    notebook: str
    results: dict = field(default_factory=dict)     # question id -> status
    feedback: dict = field(default_factory=dict)    # question id -> text
    error: str = ""                                 # why the run stopped early, if it did

    @property
    def passed(self):
        return sum(s == PASS for s in self.results.values())


def find_submissions(root):
    """(student, path) for every notebook under ``root``, in a stable order."""
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(f"{root} is not a folder of submissions")
    found = []
    for path in sorted(root.rglob("*.ipynb")):
        if ".ipynb_checkpoints" in path.parts:
            continue
        rel = path.relative_to(root)
        student = rel.parts[0] if len(rel.parts) > 1 else path.stem
        found.append((student, path))
    return found


def expected_questions(path, text):
    match = re.match(r"(\d{2})", path.name)
    if match and lesson_questions(match.group(1)):
        return lesson_questions(match.group(1))
    known = questions()
    return list(dict.fromkeys(q for q in _CHECK_CALL.findall(text) if q in known))


def _first_line(exc):
    text = str(exc).strip().splitlines()
    error_lines = [line for line in text if re.match(r"^\w*(Error|Exception)\b", line)]
    return (error_lines[-1] if error_lines else (text[-1] if text else type(exc).__name__))[:200]


def _run(nb, workdir, timeout, log):
    """Execute ``nb`` in ``workdir``; return the reason it stopped early, or ''."""
    env_before = os.environ.get("GEMMLAB_GRADE_LOG")
    os.environ["GEMMLAB_GRADE_LOG"] = str(log)
    try:
        client = NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=True,
                                resources={"metadata": {"path": str(workdir)}})
        client.execute()
    except CellTimeoutError:
        return f"a cell ran longer than the {timeout} s limit"
    except DeadKernelError as exc:
        return f"the kernel died ({_first_line(exc)})"
    finally:
        if env_before is None:
            os.environ.pop("GEMMLAB_GRADE_LOG", None)
        else:
            os.environ["GEMMLAB_GRADE_LOG"] = env_before
    for index, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                return f"cell {index + 1} raised {output.get('ename')}: {output.get('evalue')}"[:200]
    return ""


def grade_notebook(student, path, timeout=120):
    text = path.read_text(encoding="utf-8", errors="replace")
    grade = NotebookGrade(student, path.name)
    wanted = expected_questions(path, text)
    try:
        nb = nbformat.reads(text, as_version=4)
    except Exception as exc:  # any parse failure is the student's file, not ours
        grade.error = f"not a valid notebook ({type(exc).__name__}: {str(exc)[:120]})"
        nb = None
    if nb is not None:
        with tempfile.TemporaryDirectory(prefix="gemmlab-grade-") as tmp:
            copy = Path(tmp) / path.name
            shutil.copyfile(path, copy)
            log = Path(tmp) / "checks.jsonl"
            grade.error = _run(nb, tmp, timeout, log)
            if log.exists():
                for line in log.read_text(encoding="utf-8").splitlines():
                    record = json.loads(line)
                    # the last check of a question counts: students may re-run a cell
                    grade.results[record["question"]] = record["status"]
                    grade.feedback[record["question"]] = record["feedback"]
    for qid in wanted:
        if qid not in grade.results:
            if grade.error:
                grade.results[qid], grade.feedback[qid] = FAIL, f"not checked: {grade.error}"
            else:
                grade.results[qid], grade.feedback[qid] = NOT_ATTEMPTED, "its check cell was removed"
    return grade


def grade_folder(root, timeout=120, progress=None):
    grades = []
    submissions = find_submissions(root)
    for i, (student, path) in enumerate(submissions, 1):
        if progress:
            progress(f"[{i}/{len(submissions)}] {student}: {path.name}")
        grades.append(grade_notebook(student, path, timeout))
    return grades


def _columns(grades):
    return list(dict.fromkeys(q for g in grades for q in g.results))


_SHORT = {PASS: "pass", FAIL: "FAIL", NOT_ATTEMPTED: "-"}


def table(grades):
    """A plain-text table: one row per notebook, one column per question, then the total."""
    cols = _columns(grades)
    header = ["student", "notebook"] + cols + ["passed", "note"]
    rows = [[g.student, g.notebook] + [_SHORT.get(g.results.get(q), "") for q in cols]
            + [f"{g.passed}/{len(g.results)}", g.error] for g in grades]
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip()
             for row in [header] + rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def write_reports(grades, out):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    cols = _columns(grades)
    with open(out / "grades.csv", "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["student", "notebook"] + cols + ["passed", "total", "error"])
        for g in grades:
            writer.writerow([g.student, g.notebook] + [g.results.get(q, "") for q in cols]
                            + [g.passed, len(g.results), g.error])
    with open(out / "grades.json", "w", encoding="utf-8") as f:
        json.dump([dict(asdict(g), passed=g.passed, total=len(g.results)) for g in grades],
                  f, indent=2)
    return out / "grades.csv", out / "grades.json"


def main(submissions, out="grades", timeout=120):
    root, out_path = Path(submissions).resolve(), Path(out).resolve()
    if out_path == root or root in out_path.parents:
        print("gemmlab grade: --out must lie outside the submissions folder, "
              "which grading never modifies", file=sys.stderr)
        return 2
    try:
        grades = grade_folder(root, timeout, progress=lambda m: print(m, file=sys.stderr))
    except FileNotFoundError as exc:
        print(f"gemmlab grade: {exc}", file=sys.stderr)
        return 2
    if not grades:
        print(f"gemmlab grade: no .ipynb files under {root}", file=sys.stderr)
        return 2
    print(table(grades))
    csv_path, json_path = write_reports(grades, out_path)
    print(f"\nwritten: {csv_path}\n         {json_path}")
    return 0
