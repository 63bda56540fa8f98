"""``gemmlab grade SUBMISSIONS``: run every student notebook in isolation, collect its answers,
and judge them here, with the grader's own bank.

For each notebook (``SUBMISSIONS/<student>/<NN_name>.ipynb``, or ``SUBMISSIONS/<student>.ipynb``
with ``--lesson NN``):

1. Its bytes were read into memory before anything ran. A fresh temporary folder gets a copy of
   them, a copy of gemmlab whose bank has no reference answers, and a copy of the grader.
2. :mod:`gemmlab_grader.runner` executes it there, confined (:mod:`~gemmlab_grader.confine`:
   own session, CPU/memory/file/process limits, per-cell timeout; ``--sandbox``: bubblewrap),
   then collects in its kernel the value named by each question's ``answer_name`` (the source of
   the defining cell for a code question). The questions are those of the notebook's lesson, in
   the grader's bank, never those the notebook mentions.
3. Every process it started is killed; the installed packages and the submissions are put back
   if it changed them (and it is noted). A change to the Python environment (checked once at the
   end, with ``--sandbox`` impossible) marks the notebook that made it and the whole run (exit 3).
4. The answers are judged here: values with the bank's references, code by
   :func:`~gemmlab_grader.isolate.judge_code` on hidden cases drawn here from a seed of the
   student's own (:func:`case_seed`: the run's secret and the student's folder name; the secret
   is in no report, environment or worker, and the worker gets cases, never a seed).

Nothing the notebook prints, logs or calls (``check()`` included) decides a verdict. Reports are
written after the last notebook, to ``--out`` (which may not lie inside SUBMISSIONS).
"""
import hashlib
import hmac
import json
import os
import re
import secrets
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from gemmlab.grading.bank import lesson_questions, questions
from gemmlab.grading.checker import Result, judge_question
from gemmlab.grading.files import write_file
from gemmlab.judging import FAIL, NOT_ATTEMPTED, PASS

from . import answers, confine, integrity, report, sandbox
from .integrity import file_state
from .isolate import Isolation, judge_code, start_confined

MAX_NOTEBOOK_BYTES = 32 << 20
MAX_ANSWERS_BYTES = answers.MAX_TOTAL_BYTES * 2
_LESSON = re.compile(r"(\d{2})_")


@dataclass
class NotebookGrade:
    student: str
    notebook: str                                   # its path inside SUBMISSIONS
    lesson: str = ""
    results: dict = field(default_factory=dict)     # question id -> status
    feedback: dict = field(default_factory=dict)    # question id -> text
    notes: list = field(default_factory=list)       # what went wrong while running it

    @property
    def passed(self):
        return sum(s == PASS for s in self.results.values())

    @property
    def note(self):
        return "; ".join(self.notes)

    def as_dict(self):
        return dict(asdict(self), passed=self.passed, total=len(self.results))

    def set(self, result):
        self.results[result.question], self.feedback[result.question] = result.status, result.feedback


@dataclass
class Submission:
    student: str
    notebook: str
    path: Path
    data: bytes = None
    problem: str = ""          # why it cannot be run, when it cannot


@dataclass(frozen=True)
class Settings:
    timeout: int = 120                  # seconds per cell (wall clock and CPU), and per code answer
    notebook_timeout: int = 900         # seconds per notebook, everything included
    memory_mib: int = 8192              # address space per process
    sandbox: bool = False
    seed: int = None                    # the secret hidden cases derive from; None: drawn at
                                        # random; never reported (--seed repeats a run)
    lesson: str = None                  # the lesson of every notebook (else from its file name)

    def limits(self):
        return confine.Limits(cpu_seconds=self.notebook_timeout,
                              memory_bytes=self.memory_mib << 20)


# --- finding and reading submissions ----------------------------------------------------------

def _read_regular(path, limit):
    """Up to ``limit + 1`` bytes of ``path`` (so that a longer file shows), or None if it is not a
    regular file; a link is not followed and a FIFO does not block. OSError if unreadable."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return f.read(limit + 1)


def read_notebook_file(path):
    """(bytes, '') of a regular file, or (None, why not) for a link, folder, FIFO, device..."""
    try:
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode):
            return None, "a symbolic link, not followed"
        if stat.S_ISDIR(info.st_mode):
            return None, "a folder, not a notebook file"
        if not stat.S_ISREG(info.st_mode):
            return None, "not a regular file (a FIFO, socket or device)"
        if info.st_size > MAX_NOTEBOOK_BYTES:
            return None, f"larger than {MAX_NOTEBOOK_BYTES >> 20} MiB"
        data = _read_regular(path, MAX_NOTEBOOK_BYTES)
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror})"
    if data is None:
        return None, "not a regular file"
    if len(data) > MAX_NOTEBOOK_BYTES:
        return None, f"larger than {MAX_NOTEBOOK_BYTES >> 20} MiB"
    return data, ""


def find_submissions(root):
    """Every entry named ``*.ipynb`` under ``root`` (links are not followed, checkpoints
    skipped), in a stable order, each read into memory now."""
    root = Path(root)
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != ".ipynb_checkpoints")
        for name in sorted(files + [d for d in dirs if d.endswith(".ipynb")]):
            if not name.endswith(".ipynb"):
                continue
            path = Path(folder) / name
            rel = path.relative_to(root)
            student = rel.parts[0] if len(rel.parts) > 1 else Path(name).stem
            data, problem = read_notebook_file(path)
            found.append(Submission(student, str(rel), path, data, problem))
        dirs[:] = [d for d in dirs if not d.endswith(".ipynb")]
    return sorted(found, key=lambda s: s.notebook)


def lesson_of(sub, forced=None):
    """The lesson whose questions a notebook answers, as two digits: ``forced`` (``--lesson``) or
    the two digits starting its file name; None if neither names a lesson of the bank."""
    lesson = forced if forced is not None else (_LESSON.match(Path(sub.notebook).name) or [0, None])[1]
    return f"{int(lesson):02d}" if lesson is not None and lesson_questions(lesson) else None


# --- the grader --------------------------------------------------------------------------------

def _read_small(path, limit):
    """A small JSON file a student's process wrote: its object, or None (absent, a link, not a
    regular file, too large, malformed)."""
    try:
        data = _read_regular(path, limit)
        value = json.loads(data) if data is not None and len(data) <= limit else None
    except (OSError, ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _listing(root):
    """Relative paths of everything under ``root`` (folders too), to see what gets planted."""
    return set(integrity.walk(root, folders=True))


class Grader:
    """Grades submissions one by one (see the module's docstring)."""

    def __init__(self, settings, root, out, progress=print):
        self.settings, self.root, self.out, self.progress = settings, Path(root), Path(out), progress
        self._secret = (secrets.token_bytes(32) if settings.seed is None
                        else settings.seed.to_bytes(8, "big"))
        self.bank = questions()                     # loaded before any student code runs
        self.public = [{"id": q.id, "prompt": q.prompt, "answer_name": q.answer_name}
                       for q in self.bank.values()]
        self.snapshot = integrity.PackageSnapshot()
        self.watch = None if settings.sandbox else integrity.EnvironmentWatch()
        self.run_dir = Path(tempfile.mkdtemp(prefix="gemmlab-grade-"))
        self.hidden = (str(self.root), str(self.out))
        self.warnings = []
        self.untrusted = ""

    def close(self):
        shutil.rmtree(self.run_dir, ignore_errors=True)

    def grade(self, submissions):
        states = {s.path: file_state(s.path) for s in submissions if s.data is not None}
        listing_before = _listing(self.root)
        grades, windows = [], []
        for i, sub in enumerate(submissions, 1):
            start, start_ns = time.monotonic(), time.time_ns()
            grade = self.grade_one(sub, submissions, states)
            grades.append(grade)
            windows.append((start_ns, time.time_ns(), grade))
            self.progress(f"[{i}/{len(submissions)}] {report.printable(sub.student, 40)}: "
                          f"{report.printable(sub.notebook, 60)}: {grade.passed}/"
                          f"{len(grade.results)} ({time.monotonic() - start:.1f} s)")
        if self.watch is not None:
            self._check_environment(windows)
        planted = sorted(_listing(self.root) - listing_before)
        if planted:
            self.warnings.append(f"files appeared in the submissions folder while grading (not "
                                 f"graded, left there): {', '.join(planted[:10])}")
        return grades

    def grade_one(self, sub, submissions, states):
        grade = NotebookGrade(sub.student, sub.notebook)
        lesson = lesson_of(sub, self.settings.lesson)
        if lesson is None:
            grade.notes.append("no lesson: name the notebook NN_... after its lesson, or grade "
                               "with --lesson NN")
            return grade
        grade.lesson = lesson
        wanted = [self.bank[q] for q in lesson_questions(lesson)]
        problem = sub.problem
        collected = None
        if not problem:
            collected, problem = self._run(sub, wanted, grade)
            self._check_integrity(submissions, states, grade)
        for q in wanted:
            if problem or collected is None:
                grade.set(Result(q.id, FAIL, f"not graded: {problem or 'no answers collected'}"))
            else:
                grade.set(self._judge(q, collected.get(q.id), sub.student))
        if problem:
            grade.notes.insert(0, problem)
        return grade

    def _run(self, sub, wanted, grade):
        """Run the notebook; (answers by question id, '') or (None, why there are none)."""
        workdir = Path(tempfile.mkdtemp(dir=self.run_dir, prefix="nb-"))
        try:
            self.snapshot.write_copy(workdir / "pkg", self.public)
            (workdir / "submission.ipynb").write_bytes(sub.data)
            requests = [{"id": q.id, "answer_name": q.answer_name, "code": q.is_code}
                        for q in wanted]
            (workdir / "request.json").write_text(json.dumps(
                {"notebook": "submission.ipynb", "timeout": self.settings.timeout,
                 "requests": requests}))
            ended = self._execute(workdir)
            run = _read_small(workdir / "run.json", 1 << 20) or {}
            for error in (run.get("errors") or [])[:3]:
                if isinstance(error, dict):
                    grade.notes.append(_error_note(error))
            printed = run.get("output_bytes")
            if isinstance(printed, int) and printed > 1 << 20:
                grade.notes.append(f"printed {printed >> 20} MiB of output (not kept)")
            if ended:
                return None, ended
            if run.get("stopped"):
                return None, str(run["stopped"])[:300]
            collected = _read_small(workdir / "answers.json", MAX_ANSWERS_BYTES)
            if collected is None or not isinstance(collected.get("answers"), dict):
                return None, "its answers could not be read back"
            return collected["answers"], ""
        finally:
            shutil.rmtree(workdir, ignore_errors=True)

    def _execute(self, workdir):
        """Run the confined runner on the package copy in ``workdir``; '' if it ended normally,
        else why not."""
        tree = start_confined(self._isolation(workdir / "pkg"), workdir, "gemmlab_grader.runner",
                              workdir, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
        try:
            tree.popen.wait(timeout=self.settings.notebook_timeout)
        except subprocess.TimeoutExpired:
            return f"the notebook ran past {self.settings.notebook_timeout} s and was stopped"
        finally:
            tree.kill()
        if tree.popen.returncode != 0:
            return (f"the notebook's runner ended with {confine.describe_exit(tree.popen.returncode)}"
                    f" (did the notebook kill its parent process?)")
        return ""

    def _check_integrity(self, submissions, states, grade):
        """Put back the package and the submissions if the notebook changed them, and say so."""
        changed = self.snapshot.restore()
        if changed:
            grade.notes.append(f"TAMPERING: it modified the grader's package "
                               f"({', '.join(changed[:4])}); restored")
        touched = [s for s in submissions
                   if s.path in states and file_state(s.path) != states[s.path]]
        for other in touched:
            write_file(other.path, other.data)     # as it was read, over whatever is there now
            states[other.path] = file_state(other.path)
        if touched:
            grade.notes.append(f"TAMPERING: it modified submissions "
                               f"({', '.join(s.notebook for s in touched[:4])}); restored")

    def _check_environment(self, windows):
        """Files of the Python environment changed during the run cannot be put back: name the
        notebook that ran when each changed (its ctime) and distrust the whole run."""
        modified = self.watch.changed()
        if not modified:
            return
        for start, end, grade in windows:
            during = [p for p, now in modified.items()
                      if now is not None and start <= now.ctime_ns <= end]
            if during:
                grade.notes.append(f"TAMPERING: it modified the Python environment "
                                   f"({', '.join(during[:3])})")
        self.untrusted = (f"the Python environment changed during grading "
                          f"({', '.join(list(modified)[:3])}"
                          f"): grades judged after that cannot be trusted; reinstall it and grade "
                          f"with --sandbox")
        self.warnings.append(self.untrusted)

    def _judge(self, q, entry, student):
        """The verdict on one collected answer entry (see answers.extract) of ``student``."""
        try:
            if not isinstance(entry, dict) or entry.get("missing"):
                return Result(q.id, NOT_ATTEMPTED, f"the notebook has no variable "
                                                   f"{q.answer_name}. {q.prompt}")
            if entry.get("error"):
                return Result(q.id, FAIL, f"{q.answer_name}: {str(entry['error'])[:300]}")
            if q.is_code and "source" in entry:
                return self._judge_code(q, str(entry["source"]), str(entry.get("name")),
                                        case_seed(self._secret, student, q.id))
            return judge_question(q, answers.decode(entry.get("value")))
        except answers.DecodeError as exc:
            return Result(q.id, FAIL, f"{q.answer_name} could not be read back: {exc}")
        except Exception as exc:  # a bug of ours must not stop the others' grading
            return Result(q.id, FAIL, f"the grader could not judge this answer "
                                      f"({type(exc).__name__}: {str(exc)[:200]})")

    def _judge_code(self, q, source, name, seed):
        """judge_code on hidden cases, with a fresh package copy of its own (deleted after)."""
        with tempfile.TemporaryDirectory(dir=self.run_dir, prefix="code-") as folder:
            self.snapshot.write_copy(folder, self.public)
            return judge_code(q.id, source, name, seed=seed, timeout=self.settings.timeout,
                              isolation=self._isolation(folder))

    def _isolation(self, package_root):
        """How this run confines a student's process that imports the copy at ``package_root``."""
        return Isolation(package_root=str(package_root), limits=self.settings.limits(),
                         sandbox=self.settings.sandbox, hidden_paths=self.hidden)

    def protections(self):
        lines = ["verdicts: the grader collects each question's answer after the notebook ran "
                 "and judges it itself; nothing the notebook prints, logs or calls counts",
                 "code answers: run in their own process; hidden cases drawn per student from "
                 "this run's secret (never recorded)",
                 "notebooks import a copy of gemmlab without the bank's reference answers",
                 f"each cell: {self.settings.timeout} s (wall clock and CPU); each notebook: "
                 f"{self.settings.notebook_timeout} s",
                 *confine.protections(self.settings.limits())]
        if self.settings.sandbox:
            lines.append("sandbox (bubblewrap): read-only file system, no network, no other "
                         "processes visible, only its own folder writable; the repository, the "
                         "submissions and the output folder are not mounted")
        else:
            lines.append("NO sandbox: a notebook runs as you and can read what you can (the "
                         "repository with solutions/ and the bank's source, other processes); the "
                         "grader restores its package and the submissions if one modifies them, "
                         "and distrusts the run if one modifies the Python environment. Use "
                         "--sandbox (bubblewrap) to close this.")
        return lines


def case_seed(secret, student, question_id):
    """The seed of one student's hidden cases for one question: a keyed hash of the student's
    folder name and the question under the run's ``secret``, so two students get different cases
    and nobody who lacks the secret can compute them."""
    message = f"{student}\0{question_id}".encode("utf-8", "surrogateescape")
    return int.from_bytes(hmac.new(secret, message, hashlib.sha256).digest()[:8], "big")


def _error_note(error):
    """'cell 3 raised ValueError: ...' (or 'cell 3 ran past 10 s: interrupted') from run.json."""
    cell, name, value = error.get("cell"), str(error.get("ename")), str(error.get("evalue") or "")
    if name == "Timeout":
        return f"cell {cell} {value}"[:200]
    return (f"cell {cell} raised {name}" + (f": {value}" if value else ""))[:200]


def grade_notebook(path, student="student", settings=Settings()):
    """Grade the one notebook at ``path`` as :class:`Grader` does (for tests and scripts)."""
    path = Path(path)
    data, problem = read_notebook_file(path)
    sub = Submission(student, path.name, path, data, problem)
    grader = Grader(settings, path.parent, path.parent / "no-output", progress=lambda m: None)
    try:
        return grader.grade([sub])[0]
    finally:
        grader.close()


def main(submissions, out="grades", timeout=120, notebook_timeout=900, memory_mib=8192,
         use_sandbox=False, seed=None, lesson=None):
    """The ``gemmlab grade`` command; returns the exit status (0, 2 for a usage problem, 3 when
    the run could not be trusted to the end)."""
    root, out_path = Path(submissions).resolve(), Path(out).resolve()
    if not root.is_dir():
        print(f"gemmlab grade: {submissions} is not a folder of submissions", file=sys.stderr)
        return 2
    if out_path == root or root in out_path.parents:
        print("gemmlab grade: --out must lie outside the submissions folder, which grading "
              "never modifies", file=sys.stderr)
        return 2
    if use_sandbox and sandbox.bwrap() is None:
        print("gemmlab grade: --sandbox needs bubblewrap (`apt-get install bubblewrap`), and "
              "it does not work here", file=sys.stderr)
        return 2
    if lesson is not None and not lesson_questions(lesson):
        print(f"gemmlab grade: --lesson {lesson}: the bank has no such lesson", file=sys.stderr)
        return 2
    settings = Settings(timeout, notebook_timeout, memory_mib, use_sandbox, seed, lesson)
    found = find_submissions(root)
    if not found:
        print(f"gemmlab grade: no .ipynb files under {root}", file=sys.stderr)
        return 2
    out_before = _listing(out_path)
    bytecode = sys.dont_write_bytecode
    sys.dont_write_bytecode = True      # so that nothing legitimate changes the environment
    grader = Grader(settings, root, out_path, progress=lambda m: print(m, file=sys.stderr))
    try:
        protections = grader.protections()
        print("gemmlab grade: protections in this run:", file=sys.stderr)
        for line in protections:
            print(f"  - {line}", file=sys.stderr)
        grades = grader.grade(found)
    finally:
        grader.close()
        sys.dont_write_bytecode = bytecode
    planted = sorted(_listing(out_path) - out_before - {"grades.csv", "grades.json"})
    if planted:
        grader.warnings.append(f"files appeared in the output folder while grading (left "
                               f"there): {', '.join(planted[:10])}")
    print(report.table(grades))
    info = {"sandbox": settings.sandbox, "timeout": settings.timeout,
            "protections": protections, "warnings": grader.warnings}
    csv_path, json_path = report.write_reports(grades, out_path, info)
    for warning in grader.warnings:
        print(f"WARNING: {report.printable(warning, 300)}", file=sys.stderr)
    print(f"\nwritten: {csv_path}\n         {json_path}")
    return 3 if grader.untrusted else 0
