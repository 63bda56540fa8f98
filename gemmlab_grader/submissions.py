"""A class's submissions: found in the snapshot of their folder (so every notebook is read once,
before anything runs), the lesson each answers, and the slice of the students one shard grades.

``SUBMISSIONS/<student>/<NN_name>.ipynb``, or ``SUBMISSIONS/<student>.ipynb`` with ``--lesson
NN``, or a Canvas or Moodle download (:mod:`~gemmlab_grader.downloads`); ``.ipynb_checkpoints``
folders are skipped. An entry named ``*.ipynb`` that is no regular file (a folder, a FIFO, a
link, too large) is still a submission: graded 0 with the reason.

One notebook per student per lesson counts (:func:`one_per_lesson`): the one with the name the
lesson was handed out under, otherwise the newest; the others are named in a note. A notebook
under the exercises' former name (``05_tiled_gemm.ipynb``, before they were named
``05_tiled_gemm_exercises.ipynb``) answers its lesson too; the grade names the file graded.
"""
import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from gemmlab import course
from gemmlab.grading.bank import lesson_questions

from . import downloads

MAX_NOTEBOOK_BYTES = 32 << 20
_LESSON = re.compile(r"(\d{2})[a-z]?_")        # 12b_...: a part of lesson 12
_WHAT = {"dir": "a folder, not a notebook file", "link": "a symbolic link, not followed",
         "other": "not a regular file (a FIFO, socket or device)"}


@dataclass
class Submission:
    student: str
    notebook: str              # its path inside SUBMISSIONS
    path: Path
    data: bytes = None
    problem: str = ""          # why it cannot be run, when it cannot
    name: str = ""             # the file name the student gave it ("": the path's last part)
    mtime: float = 0.0
    remarks: list = field(default_factory=list)     # notes for its grade (late, not graded)
    identity: object = None    # a roster.Identity, when an LMS download named the student

    @property
    def file_name(self):
        return self.name or Path(self.notebook).name


def find_submissions(snapshot):
    """The submissions in a :class:`~gemmlab_grader.folders.FolderSnapshot`, by path, with the
    bytes it read."""
    found = []
    for rel, saved in snapshot.entries.items():
        parts = rel.split("/")
        if not parts[-1].endswith(".ipynb") or ".ipynb_checkpoints" in parts[:-1] \
                or any(p.endswith(".ipynb") for p in parts[:-1]):
            continue
        lms = downloads.read(parts)
        student = lms.student if lms else parts[0] if len(parts) > 1 else Path(parts[0]).stem
        problem, data = _WHAT.get(saved.kind, ""), saved.data
        if saved.kind == "file" and data is None:
            problem = (f"larger than {MAX_NOTEBOOK_BYTES >> 20} MiB"
                       if saved.size > MAX_NOTEBOOK_BYTES else "could not be read")
        found.append(Submission(student, rel, snapshot.root / rel, None if problem else data,
                                problem, lms.name if lms else "", saved.mtime,
                                [lms.remark] if lms and lms.remark else [],
                                lms.identity if lms else None))
    return sorted(found, key=lambda s: s.notebook)


def lesson_of(sub, forced=None):
    """The lesson a notebook answers, as two digits: ``forced`` (``--lesson``), else the digits
    starting its file name ("12" for ``12b_...``); None if not a lesson of the bank."""
    lesson = forced if forced is not None else (_LESSON.match(sub.file_name) or [0, None])[1]
    return f"{int(lesson):02d}" if lesson is not None and lesson_questions(lesson) else None


def parse_shard(text):
    """``"i/n"`` (1 <= i <= n) as (i, n); ValueError otherwise."""
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", str(text))
    if not match or not 1 <= int(match[1]) <= int(match[2]):
        raise ValueError(f"expected a shard like 2/8 (the 2nd of 8, counted from 1), got {text!r}")
    return int(match[1]), int(match[2])


def shard_of(student, n):
    """The shard (1 to n) a student belongs to: fixed by the name alone, so that every machine
    of a split run agrees without talking to the others, and adding a student moves no one."""
    return int.from_bytes(hashlib.sha256(student.encode("utf-8", "surrogateescape")).digest()[:8],
                          "big") % n + 1


def in_shard(submissions, shard):
    """The submissions of the students of ``shard`` ((i, n), or None for all)."""
    return [s for s in submissions if shard is None or shard_of(s.student, shard[1]) == shard[0]]


def handed_out():
    """{lesson: the file name its exercise notebook was handed out under}."""
    try:
        names = [p.name for p in course.path("exercises").glob("*.ipynb")]
    except FileNotFoundError:
        return {}
    return {m[1]: n for n in names if (m := _LESSON.match(n))}


def one_per_lesson(subs, forced=None, names=None):
    """The submissions that count: per student and lesson, the one named as handed out (see
    :func:`handed_out`, or ``names``), otherwise the newest (then the last by path); each one
    chosen over others carries a remark naming them. Notebooks of no lesson all stay."""
    names = handed_out() if names is None else names
    groups = {}
    for sub in subs:
        groups.setdefault((sub.student, lesson_of(sub, forced)), []).append(sub)
    kept = []
    for (_, lesson), group in groups.items():
        if lesson is None or len(group) == 1:
            kept += group
            continue
        wanted = names.get(lesson)
        chosen = max(group, key=lambda s: (s.file_name == wanted, s.mtime, s.notebook))
        rule = (f"the handed-out name {wanted} counts, else the newest" if wanted
                else "the newest counts")
        chosen.remarks.append(f"{len(group)} notebooks of lesson {lesson} in this folder; graded "
                              f"{chosen.notebook} ({rule}); not graded: "
                              + ", ".join(s.notebook for s in group if s is not chosen))
        kept.append(chosen)
    return sorted(kept, key=lambda s: s.notebook)
