"""A run's secret, from which every student's hidden cases derive
(:func:`~gemmlab_grader.grade.case_seed`): random, or ``--seed N``, or read back with
``--seed-file`` from the file a run writes beside its reports (:data:`FILE`, mode 0600, never in
a report, never in what a student is sent), so that a regrade draws the same cases.
"""
import os
import secrets
from pathlib import Path

FILE = "PRIVATE-run-secret-do-not-share.txt"
_HEADER = ("# The secret of a gemmlab grading run: every student's hidden cases derive from it.\n"
           "# Keep it private (students who have it can compute their hidden cases). Regrade\n"
           "# with: gemmlab grade SUBMISSIONS --seed-file THIS_FILE\n")


def new(seed=None):
    """The secret bytes: from ``seed`` (an int, ``--seed``), else random."""
    return secrets.token_bytes(32) if seed is None else seed.to_bytes(8, "big")


def read(path):
    """The secret in a file :func:`write` made; ValueError saying what is wrong otherwise."""
    try:
        lines = Path(path).read_text(encoding="ascii")[:4096].splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"--seed-file {path}: cannot be read "
                         f"({getattr(exc, 'strerror', None) or exc})") from None
    values = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    try:
        if len(values) != 1:
            raise ValueError
        secret = bytes.fromhex(values[0])
        if not 8 <= len(secret) <= 64:
            raise ValueError
    except ValueError:
        raise ValueError(f"--seed-file {path}: expected the file a grading run wrote ({FILE}): "
                         f"comment lines and one line of hex digits") from None
    return secret


def write(folder, secret):
    """Write ``secret`` into ``folder``/:data:`FILE`, readable by its owner only (a new file
    renamed into place: never written through a link). Returns its path."""
    path = Path(folder) / FILE
    temporary = path.with_name(f".{FILE}.{os.getpid()}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(_HEADER + secret.hex() + "\n")
    os.replace(temporary, path)
    return path
