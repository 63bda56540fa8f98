"""Who each student is in the LMS: a roster file (``--roster FILE``, CSV with a header row) maps
each student's folder name (column ``student``) to the LMS's ``id``, ``email``, ``name``,
``section``, ``sis_user_id`` and ``sis_login_id`` (all but ``student`` optional). A Canvas or
Moodle download gives the LMS id and name itself (:mod:`~gemmlab_grader.downloads`); the
roster's columns come first where both say something.
"""
import csv
import io
from dataclasses import dataclass, replace
from pathlib import Path

COLUMNS = ("student", "id", "email", "name", "section", "sis_user_id", "sis_login_id")
MAX_FILE = 8 << 20


class RosterError(ValueError):
    """A roster that cannot be used, with what is wrong in it."""


@dataclass(frozen=True)
class Identity:
    """One student as the LMS knows them; ``student`` is the grader's name (the folder)."""
    student: str
    id: str = ""
    email: str = ""
    name: str = ""
    section: str = ""
    sis_user_id: str = ""
    sis_login_id: str = ""
    participant: str = ""      # a Moodle download's participant number (its "Identifier")

    @property
    def shown(self):
        """The name a person reads: the LMS's, else the folder's."""
        return self.name or self.student


def read(path):
    """{student: Identity} from the roster CSV at ``path`` (RosterError says what is wrong)."""
    path = Path(path)
    try:
        if path.stat().st_size > MAX_FILE:
            raise RosterError(f"{path}: larger than {MAX_FILE >> 20} MiB")
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise RosterError(f"{path}: cannot be read ({getattr(exc, 'strerror', None) or exc})") \
            from None
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        raise RosterError(f"{path}: empty; expected a header row naming {', '.join(COLUMNS)}")
    header = [h.strip().lower() for h in rows[0]]
    unknown = [h for h in header if h not in COLUMNS]
    if "student" not in header or unknown:
        raise RosterError(f"{path}: the header row is {rows[0]}; expected the columns "
                          f"{', '.join(COLUMNS)} (only 'student', the folder name, is required)")
    found = {}
    for line, row in enumerate(rows[1:], 2):
        if not any(c.strip() for c in row):
            continue
        if len(row) != len(header):
            raise RosterError(f"{path}, line {line}: {len(row)} cells, expected {len(header)}")
        fields = {h: c.strip() for h, c in zip(header, row, strict=True)}
        if not fields["student"] or fields["student"] in found:
            raise RosterError(f"{path}, line {line}: the student {fields['student']!r} is "
                              f"{'named twice' if fields['student'] else 'missing'}")
        found[fields["student"]] = Identity(**fields)
    return found


def combine(roster, downloaded, students):
    """{student: Identity} for every student graded or on the roster: the roster's fields,
    else what the LMS download said, else the folder name alone."""
    people = {}
    for student in sorted(set(roster) | set(downloaded) | set(students)):
        base = downloaded.get(student, Identity(student))
        mine = roster.get(student)
        if mine:
            base = replace(base, **{k: v for k, v in vars(mine).items() if v})
        people[student] = base
    return people
