"""Submissions as an LMS downloads them, read as students and the file names they handed in.

- Canvas ("Download Submissions" of an assignment; Canvas Instructor Guide, "How do I download
  all student submissions for an assignment?"): one flat folder, each file renamed
  ``<name>_<user id>_<submission id>_<the student's file name>``, with ``_LATE`` after the name
  for a late one (``smithjohn_LATE_1234_98765_07_ring_allreduce.ipynb``); ``<name>`` is the
  student's sortable name in lower case without spaces, and a file handed in twice under one
  name gets ``-1``, ``-2``... before its extension.
- Moodle (assignment, "Download all submissions" with "Download submissions in folders";
  docs.moodle.org/en/Assignment_settings): a folder per student,
  ``<Full Name>_<participant id>_assignsubmission_file_`` (the trailing ``_`` may be missing),
  holding the files as the student named them.

The student is ``<name>_<id>`` (two students of one name stay two); their Canvas id, or Moodle
participant number, and name go to the gradebooks (:mod:`~gemmlab_grader.gradebook`).
"""
import re
from dataclasses import dataclass

from .roster import Identity

CANVAS = re.compile(r"(?P<name>[^_/]+?)(?P<late>_LATE)?_(?P<user>\d+)_(?P<sub>\d+)_"
                    r"(?P<file>[^/]+\.ipynb)")
MOODLE = re.compile(r"(?P<name>[^/]+)_(?P<user>\d+)_assignsubmission_file_?")
_AGAIN = re.compile(r"-\d+(?=\.ipynb$)")       # Canvas's -1, -2 for a name handed in again


@dataclass(frozen=True)
class Found:
    """Who handed in a file and what they called it; ``remark`` is a note for their grade."""
    student: str
    identity: Identity
    name: str
    remark: str = ""


def read(parts):
    """The :class:`Found` of the path ``parts`` (relative to the submissions folder) if an LMS
    named it, else None."""
    if len(parts) == 1 and (m := CANVAS.fullmatch(parts[0])):
        student = f"{m['name']}_{m['user']}"
        late = "Canvas marked this submission LATE" if m["late"] else ""
        return Found(student, Identity(student, id=m["user"], name=m["name"]),
                     _AGAIN.sub("", m["file"]), late)
    if len(parts) > 1 and (m := MOODLE.fullmatch(parts[0])):
        student = f"{m['name']}_{m['user']}"
        return Found(student, Identity(student, name=m["name"], participant=m["user"]), parts[-1])
    return None
