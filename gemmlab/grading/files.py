"""Writing a file whole, the one way the grading tools replace a file (reports, restored
submissions, generated exercises)."""
import os
import secrets
from pathlib import Path


def write_file(path, data, mode=0o600):
    """Write ``data`` (str, as UTF-8, or bytes) to ``path`` through a new file renamed over it: no
    reader sees half a file, a link at ``path`` is replaced (never followed), and the new file is
    removed if anything fails. ``mode`` (less the umask): private unless asked otherwise."""
    path = Path(path)
    data = data.encode("utf-8") if isinstance(data, str) else data
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(8)}")
    # O_NOFOLLOW: POSIX only (on Windows, O_EXCL alone refuses a link already there)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), mode)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
