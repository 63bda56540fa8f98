"""``gemmlab grade SUBMISSIONS`` (:func:`main`): the notebooks, read into memory first
(:class:`~gemmlab_grader.folders.FolderSnapshot`), are graded ``--jobs`` at a time (threads),
each inside a boundary that turns whatever fails while grading it into a note on it. Each runs in
bubblewrap (:class:`~gemmlab_grader.execute.NotebookRun`) on a copy of gemmlab without references;
its answers are judged here with the grader's own bank, code by
:func:`~gemmlab_grader.isolate.judge_code` on hidden cases seeded per student (:func:`case_seed`;
the run's secret is in no report, environment or worker). Nothing the notebook prints, logs or
calls (``check()`` included) decides a verdict. ``--trusted`` (``Settings.sandbox`` False) does
the same with no sandbox and guards nothing.
"""
import hashlib
import hmac
import os
import resource
import shutil
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path

from gemmlab.grading.bank import get_question, lesson_questions, questions
from gemmlab.grading.checker import Result, judge_question
from gemmlab.judging import FAIL, NOT_ATTEMPTED, PASS, values

from . import gradebook, points, publish, report, roster, sandbox, secret, withheld_bank
from .execute import NotebookRun
from .folders import FolderSnapshot
from .isolate import Isolation, judge_code
from .submissions import Submission, find_submissions, in_shard, lesson_of, one_per_lesson


@dataclass
class NotebookGrade:
    student: str
    notebook: str                                   # its path inside SUBMISSIONS
    lesson: str = ""
    results: dict = field(default_factory=dict)     # question id -> status
    feedback: dict = field(default_factory=dict)    # question id -> text
    notes: list = field(default_factory=list)       # what went wrong while running it
    seconds: float = 0.0                            # how long grading it took
    points: dict = field(default_factory=dict)      # question id -> what it counts in this run
    credit: dict = field(default_factory=dict)      # question id -> share of hidden cases right
                                                    # (a code answer that failed some)

    @property
    def passed(self):
        return sum(s == PASS for s in self.results.values())

    def worth(self, question):
        """The points of ``question`` in this run (the bank's, where the run set none)."""
        return self.points[question] if question in self.points else get_question(question).points

    def earned(self, question):
        """Its points if passed, a code answer's share of hidden cases right of them if not."""
        share = 1 if self.results.get(question) == PASS else self.credit.get(question, 0)
        return round(self.worth(question) * share, 2)

    @property
    def score(self):
        """The points earned."""
        return round(sum(self.earned(q) for q in self.results), 2)

    @property
    def possible(self):
        return sum(self.worth(q) for q in self.results)

    @property
    def note(self):
        return "; ".join(self.notes)

    def as_dict(self):
        return dict(asdict(self), passed=self.passed, total=len(self.results), score=self.score,
                    possible=self.possible)

    def set(self, result):
        self.results[result.question], self.feedback[result.question] = result.status, result.feedback


@dataclass(frozen=True)
class Settings:
    timeout: int = 120                  # seconds per cell (wall clock and CPU), and per code answer
    notebook_timeout: int = 900         # seconds per notebook, everything included
    memory_mib: int = 8192              # per process (address space) and per tree (cgroup), and
                                        # what its two tmpfs hold together
    sandbox: bool = True
    seed: int = None                    # the secret of the hidden cases (None: random); unreported
    lesson: str = None                  # the lesson of every notebook (else from its file name)
    jobs: int = 1                       # notebooks graded at once
    cell_cpu: int = None                # CPU seconds per cell, if not ``timeout``
    points: dict = None                 # the instructor's points ({question or lesson: points})
    secret: bytes = None                # the run's secret, read back from --seed-file
    processes: int = 512                # per notebook (and per code worker)

    def limits(self):
        return sandbox.Limits(cpu_seconds=self.notebook_timeout,
                              memory_bytes=self.memory_mib << 20, processes=self.processes)


class Grader:
    """Grades submissions, ``settings.jobs`` at a time (see the module's docstring)."""

    def __init__(self, settings, submissions, out, progress=print):
        """``submissions``: the FolderSnapshot of the submissions folder; ``out``: the output
        folder (existing)."""
        self.settings, self.progress = settings, progress
        self.secret = settings.secret or secret.new(settings.seed)
        self.bank = questions()                     # loaded before any student code runs
        self.points = points.table(self.bank, settings.points)
        public = [{"id": q.id, "prompt": q.prompt, "answer_name": q.answer_name}
                  for q in self.bank.values()]
        self.hidden = (str(submissions.root), str(out))     # never mounted in the sandbox
        self.interrupted = False
        self.stop = threading.Event()
        self.run_dir = Path(tempfile.mkdtemp(prefix="gemmlab-grade-"))
        # every notebook and code worker reads this one copy (in the sandbox, mounted read-only)
        self.shared = withheld_bank.PackageSnapshot().write_copy(self.run_dir / "pkg", public)

    def close(self):
        """Remove the run folder (the grader's own: no notebook can reach it)."""
        shutil.rmtree(self.run_dir, ignore_errors=True)

    def grade(self, submissions):
        """The NotebookGrade of each submission, in their order."""
        grades = [NotebookGrade(s.student, s.notebook) for s in submissions]
        pool = ThreadPoolExecutor(max_workers=self.settings.jobs, thread_name_prefix="grade")
        futures = {pool.submit(self._grade_guarded, s, g): (s, g)
                   for s, g in zip(submissions, grades, strict=True)}
        try:
            for done, future in enumerate(as_completed(futures), 1):
                sub, grade = futures[future]
                self.progress(f"[{done}/{len(grades)}] {report.printable(sub.notebook, 50)}: "
                              f"{points.show(grade.score)}/{points.show(grade.possible)} points "
                              f"({grade.seconds:.1f} s)")
        except KeyboardInterrupt:
            self.interrupted = True
            self.stop.set()
            for future in futures:
                future.cancel()
            sandbox.kill_all()
        finally:
            pool.shutdown(wait=True)
        for future, (sub, grade) in futures.items():
            if future.cancelled():
                self._not_graded(sub, grade, "not graded: the run was interrupted")
        return grades

    def _grade_guarded(self, sub, grade):
        """grade_one inside the notebook's boundary: any failure becomes a note on it."""
        clock = time.monotonic()
        try:
            self.grade_one(sub, grade)
        except Exception as exc:  # noqa: BLE001 a failure of ours (or of the machine) on one notebook
            grade.notes.append(f"the grader failed on this notebook ({type(exc).__name__}: "
                               f"{str(exc)[:200]}); grading went on")
        finally:
            self._not_graded(sub, grade, "not graded: the grader failed on this notebook")
            grade.seconds = time.monotonic() - clock

    def _not_graded(self, sub, grade, why):
        """Every question of the notebook's lesson that has no verdict yet fails with ``why``."""
        lesson = lesson_of(sub, self.settings.lesson)
        if lesson is None:
            return
        self._of_lesson(grade, lesson)
        for q in lesson_questions(lesson):
            if q not in grade.results:
                grade.set(Result(q, FAIL, why))
        if why not in grade.notes and any(f == why for f in grade.feedback.values()):
            grade.notes.append(why)

    def _of_lesson(self, grade, lesson):
        grade.lesson = lesson
        grade.points = {q: self.points[q] for q in lesson_questions(lesson)}

    def grade_one(self, sub, grade):
        grade.notes += sub.remarks
        lesson = lesson_of(sub, self.settings.lesson)
        if lesson is None:
            grade.notes.append("no lesson: name the notebook NN_... after its lesson, or grade "
                               "with --lesson NN")
            return
        self._of_lesson(grade, lesson)
        wanted = [self.bank[q] for q in lesson_questions(lesson)]
        problem, collected = sub.problem, None
        if not problem:
            collected, problem = self._run(sub, wanted, grade)
        for q in wanted:
            if problem:         # (then nothing was collected)
                grade.set(Result(q.id, FAIL, f"not graded: {problem}"))
            elif self.stop.is_set():
                grade.set(Result(q.id, FAIL, "not graded: the run was interrupted"))
            else:
                grade.set(self._judge(q, collected.get(q.id), sub.student, grade.credit))
        if problem:
            grade.notes.insert(0, problem)

    def _run(self, sub, wanted, grade):
        """Run the notebook; (answers by question id, '') or (None, why there are none)."""
        folder = Path(tempfile.mkdtemp(dir=self.run_dir, prefix="nb-"))
        run = NotebookRun(folder, self._isolation(), self.stop)
        try:
            request = {"timeout": self.settings.timeout, "cpu": self.settings.cell_cpu,
                       "requests": [{"id": q.id, "answer_name": q.answer_name, "code": q.is_code}
                                    for q in wanted]}
            ended = run.execute(sub.data, request, self.settings.notebook_timeout)
            if ended:
                return None, ended
            checked = run.collect()
        finally:
            run.close()
            shutil.rmtree(folder, ignore_errors=True)   # the grader's: no notebook reaches it
        report_ = checked.get("run") or {}
        for error in report_.get("errors", [])[:3]:     # 'cell 3 raised ValueError: ...'
            name, value = error["ename"], error["evalue"]   # texts: answers.check made sure
            said = value if name == "Timeout" else f"raised {name}" + (f": {value}" if value else "")
            grade.notes.append(f"cell {error['cell']} {said}"[:200])   # or 'cell 3 ran past 10 s'
        if report_.get("output_bytes", 0) > 1 << 20:        # an int: answers.check made sure
            grade.notes.append(f"printed {report_['output_bytes'] >> 20} MiB of output (not kept)")
        if report_.get("stopped"):
            return None, str(report_["stopped"])[:300]
        if not isinstance(checked.get("answers"), dict):
            return None, checked.get("problem") or "its answers could not be read back"
        return checked["answers"], ""

    def _judge(self, q, entry, student, credit):
        """The verdict on one collected answer entry (see answers.extract) of ``student``; a code
        answer runs in a worker of its own, in the sandbox (:func:`judge_code`). A code answer
        that fails puts its share of hidden cases right (counted in that one run) into
        ``credit``."""
        try:
            if not isinstance(entry, dict) or entry.get("missing"):
                return Result(q.id, NOT_ATTEMPTED, f"the notebook has no variable "
                                                   f"{q.answer_name}. {q.prompt}")
            if entry.get("error"):
                return Result(q.id, FAIL, f"{q.answer_name}: {str(entry['error'])[:300]}")
            if q.is_code and "source" in entry:
                result = judge_code(q.id, str(entry["source"]), str(entry.get("name")),
                                    seed=case_seed(self.secret, student, q.id),
                                    timeout=self.settings.timeout, isolation=self._isolation())
                right, cases = result.cases or (0, 0)
                if result.status == FAIL and right:
                    credit[q.id] = right / cases
                    result.feedback += (f" Partial credit: {right} of {cases} hidden cases "
                                        f"right.")
                return result
            return judge_question(q, values.decode(entry.get("value")))
        except Exception as exc:  # a bug of ours must not stop the others' grading
            return Result(q.id, FAIL, f"the grader could not judge this answer "
                                      f"({type(exc).__name__}: {str(exc)[:200]})")

    def _isolation(self):
        """How this run confines a student's process (it imports the package copy)."""
        return Isolation(package_root=str(self.shared), limits=self.settings.limits(),
                         sandbox=self.settings.sandbox, hidden_paths=self.hidden)

    def protections(self):
        limits, settings = self.settings.limits(), self.settings
        lines = ["verdicts: each answer is collected after the notebook ran and judged here; "
                 "nothing the notebook prints, logs or calls counts",
                 "code answers: each run in a sandboxed process of its own (kernels compiled in "
                 "one too), on hidden cases drawn per student from this run's secret",
                 "notebooks import a copy of gemmlab without the bank's reference answers",
                 f"each cell: {settings.timeout} s (wall clock and CPU); each notebook: "
                 f"{settings.notebook_timeout} s",
                 f"limits per process: {limits.cpu_seconds} s of CPU, "
                 f"{limits.memory_bytes >> 20} MiB of address space, files up to "
                 f"{limits.file_bytes >> 20} MiB, no core files",
                 f"containment: {sandbox.containment(limits)}"]
        if settings.sandbox:
            return lines + [
                f"sandbox (bubblewrap): read-only file system, no network, no other processes "
                f"visible; writable only its work folder and /dev/shm, empty memory file systems "
                f"of {settings.memory_mib // 2} MiB each; the repository, the submissions and the "
                f"output folder not mounted; {settings.jobs} notebook(s) at a time"]
        return lines + ["NO sandbox (--trusted): the notebooks run as you, unguarded: they can "
                        "read and change whatever you can. For trusted notebooks only"]


def case_seed(secret, student, question_id):
    """The seed of one student's hidden cases for one question: a keyed hash of the student's
    folder name and the question under the run's ``secret``, so two students get different cases
    and nobody who lacks the secret can compute them."""
    message = f"{student}\0{question_id}".encode("utf-8", "surrogateescape")
    return int.from_bytes(hmac.new(secret, message, hashlib.sha256).digest()[:8], "big")


def grade_notebook(path, student="student", settings=Settings()):
    """Grade the one notebook at ``path`` as :class:`Grader` does (for tests and scripts)."""
    path = Path(path).absolute()
    snapshot = FolderSnapshot(path.parent, max_depth=0, wanted=lambda rel: rel == path.name)
    sub = next((s for s in find_submissions(snapshot) if s.notebook == path.name),
               Submission(student, path.name, path, None, "not found"))
    sub.student = student
    with tempfile.TemporaryDirectory(prefix="gemmlab-grade-out-") as out:
        grader = Grader(settings, snapshot, out, progress=lambda m: None)
        try:
            return grader.grade([sub])[0]
        finally:
            grader.close()


def main(submissions, out="grades", timeout=120, notebook_timeout=900, memory_mib=8192,
         use_sandbox=True, seed=None, lesson=None, jobs=None, shard=None, cell_cpu=None,
         points_file=None, roster_file=None, seed_file=None, processes=512):
    """The ``gemmlab grade`` command; returns the exit status (0; 2 for a usage problem, a
    sandbox that cannot be had or nothing to grade; 130 when interrupted, with the reports of
    what was graded)."""
    root, out_path = Path(submissions).resolve(), Path(out).resolve()

    def refuse(message):
        print(f"gemmlab grade: {message}", file=sys.stderr)
        return 2

    if not root.is_dir():
        return refuse(f"{submissions} is not a folder of submissions")
    if out_path == root or root in out_path.parents:
        return refuse("--out must lie outside the submissions folder, which grading never "
                      "modifies")
    if use_sandbox and sandbox.missing():
        return refuse(f"refusing to grade: {sandbox.missing()}")
    if lesson is not None and not lesson_questions(lesson):
        return refuse(f"--lesson {lesson}: the bank has no such lesson")
    try:
        out_path.mkdir(parents=True, exist_ok=True)
        if not out_path.is_dir() or out_path.is_symlink() or not os.access(out_path, os.W_OK):
            raise NotADirectoryError("not a folder this user can write")
    except OSError as exc:
        return refuse(f"--out {out}: {exc.strerror or exc}")
    try:
        overrides = points.read(points_file, questions()) if points_file else None
        people = roster.read(roster_file) if roster_file else {}
        secret_ = secret.read(seed_file) if seed_file else None
    except ValueError as exc:
        return refuse(str(exc))
    snapshot = FolderSnapshot(root)
    everyone = find_submissions(snapshot)
    if not everyone:
        return refuse(f"nothing graded: no .ipynb files under {root}")
    if not any(lesson_of(s, lesson) for s in everyone):
        return refuse(f"nothing graded: none of the {len(everyone)} notebook(s) under {root} "
                      f"answers a lesson (e.g. {everyone[0].notebook}): name each NN_... after "
                      f"its lesson as handed out, or grade with --lesson NN")
    found = one_per_lesson(in_shard(everyone, shard), lesson)
    if not found:
        return refuse(f"nothing graded: shard {shard[0]}/{shard[1]} holds none of the "
                      f"{len({s.student for s in everyone})} students")
    jobs = jobs or (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                    else os.cpu_count())      # the cores this process may run on
    settings = Settings(timeout, notebook_timeout, memory_mib, use_sandbox, seed, lesson, jobs,
                        cell_cpu, overrides, secret_, processes)
    bytecode = sys.dont_write_bytecode
    sys.dont_write_bytecode = True      # the grader writes no bytecode into the shared Python
    started = time.monotonic()
    grader = Grader(settings, snapshot, out_path, progress=lambda m: print(m, file=sys.stderr))
    protections = grader.protections()
    print(f"gemmlab grade: {len(found)} notebook(s); the bank, the packages snapshotted in "
          f"{time.monotonic() - started:.1f} s; protections in this run:", file=sys.stderr)
    print("\n".join(f"  - {line}" for line in protections), file=sys.stderr)
    try:
        kept = secret.write(out_path, grader.secret)
        grades = grader.grade(found)
    finally:
        grader.close()
        sys.dont_write_bytecode = bytecode
    info = {"sandbox": settings.sandbox, "timeout": settings.timeout,
            "jobs": settings.jobs, "shard": list(shard) if shard else None,
            "students": len({s.student for s in found}), "protections": protections,
            "warnings": [], "trusted": not settings.sandbox,
            "interrupted": grader.interrupted, "secret_file": kept.name,
            "rule": "one notebook per student and lesson counts: the one with the name the "
                    "lesson was handed out under, otherwise the newest",
            "grader_peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}
    people = roster.combine(people, {s.student: s.identity for s in found if s.identity},
                            {s.student for s in found})
    info["warnings"] += [w for w in [gradebook.missing_ids(people)] if w]
    publish.finish(grades, out_path, info, people=people)
    print(f"the run's secret (to regrade with the same hidden cases, --seed-file; keep it from "
          f"students): {kept}", file=sys.stderr)
    return 130 if grader.interrupted else 0
