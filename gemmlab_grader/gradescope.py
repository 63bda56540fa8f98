"""Gradescope: ``gemmlab-grade gradescope --out autograder.zip`` builds an autograder that runs
this grader, sandbox and all, on each submission; ``python -m gemmlab_grader.gradescope
SUBMISSION RESULTS`` is what its ``run_autograder`` runs.

The zip follows Gradescope's autograder specification
(gradescope-autograders.readthedocs.io/en/latest/specs/): ``setup.sh`` (run once, as root, on
their Ubuntu image: bubblewrap, a venv with the course's dependencies) and ``run_autograder`` at
its root; the grader's sources, the bank, ``solutions/`` (the labs' references) and
:data:`CONFIG` (the lesson, the points, the run's secret) beside them. It is the instructor's:
students never see it. Each submission (``/autograder/submission``) is graded as a class of one,
its hidden cases drawn from the zip's secret and the student's Gradescope id, and
``/autograder/results/results.json`` gets a test per question (score, max_score, status,
output: the feedback), the total, and the notes.

Gradescope runs the autograder in a Docker container; under Docker's default seccomp profile a
process without CAP_SYS_ADMIN may not make the user namespaces bubblewrap needs (tried in
tests/docker_like.py's stand-in for such a container: bubblewrap cannot start). Where the
sandbox cannot start, nothing of the submission runs: results.json says why, with no score
shown to the student, and the command exits non-zero, as ``gemmlab grade`` refuses.
"""
import json
import shutil
import sys
import tempfile
import time
import tomllib
import zipfile
from pathlib import Path

import gemmlab

from . import sandbox, secret
from .points import show

CONFIG = "gemmlab-autograder.json"
ROOT = Path(gemmlab.__file__).resolve().parent.parent
SETUP = """#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image (Ubuntu).
set -euo pipefail
apt-get update
apt-get install -y --no-install-recommends bubblewrap python3 python3-venv python3-pip
python3 -m venv /autograder/venv
/autograder/venv/bin/pip install --no-cache-dir -r /autograder/source/requirements.txt
"""
RUN = """#!/usr/bin/env bash
# Gradescope runs this for each submission; the grade goes to /autograder/results/results.json.
cd /autograder/source
export PYTHONPATH=/autograder/source GEMMLAB_BACKEND=sim
exec /autograder/venv/bin/python -m gemmlab_grader.gradescope /autograder/submission \\
    /autograder/results/results.json
"""
PACKAGES = ("gemmlab", "gemmlab_grader")


def build(out, lesson=None, overrides=None):
    """Write the autograder zip to ``out`` (see the module's docstring); returns its path. Needs
    a checkout: the labs' references are in its ``solutions/``."""
    if not (ROOT / "solutions").is_dir():
        raise FileNotFoundError(f"{ROOT} is no checkout of the course (no solutions/): build "
                                f"the autograder from the repository")
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    config = {"lesson": lesson, "points": overrides or {}, "secret": secret.new().hex()}
    out = Path(out)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in (("setup.sh", SETUP), ("run_autograder", RUN)):
            info = zipfile.ZipInfo(name, time.localtime()[:6])
            info.external_attr = 0o100755 << 16          # executable, as Gradescope runs them
            z.writestr(info, text)
        z.writestr("requirements.txt", "\n".join(dependencies) + "\n")
        z.writestr(CONFIG, json.dumps(config, indent=2) + "\n")
        for folder in (*PACKAGES, "solutions"):
            for path in sorted((ROOT / folder).rglob("*")):
                if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc" \
                        and "_course" not in path.parts:
                    z.write(path, str(path.relative_to(ROOT)))
    return out


def student_of(submission_root):
    """The student's Gradescope id (else email, else "student"), from the metadata Gradescope
    writes beside the submission."""
    try:
        meta = json.loads((Path(submission_root).parent / "submission_metadata.json").read_text())
        user = meta["users"][0]
        return str(user.get("id") or user.get("email") or "student")
    except (OSError, ValueError, KeyError, IndexError, TypeError, AttributeError):
        return "student"


def results(grades):
    """Gradescope's results.json (a dict) from a run's grades.json (a dict)."""
    tests, notes = [], []
    for row in grades["notebooks"]:
        notes += [f"{row['notebook']}: {n}" for n in row["notes"]]
        for q, status in row["results"].items():
            worth = row["points"][q]
            share = 1 if status == "pass" else row["credit"].get(q, 0)
            tests.append({"name": q, "score": round(worth * share, 2),
                          "max_score": worth,
                          "status": "passed" if status == "pass" else "failed",
                          "output": f"{status}: {row['feedback'].get(q, '')}",
                          "visibility": "visible"})
    score = sum(t["score"] for t in tests)
    total = sum(t["max_score"] for t in tests)
    output = "\n".join([f"gemmlab: {show(score)} of {show(total)} points", *notes])
    return {"score": score, "output": output, "visibility": "visible",
            "stdout_visibility": "hidden", "tests": tests}


def refused(why):
    """results.json for a submission not graded: why, no score shown to the student."""
    return {"score": 0.0, "output": f"NOT GRADED: {why}", "visibility": "hidden",
            "stdout_visibility": "hidden", "tests": []}


def run(submission, results_path, source=ROOT):
    """Grade the submission folder into ``results_path``; the exit status (0 when graded)."""
    from .grade import main as grade
    config = json.loads((Path(source) / CONFIG).read_text())
    results_path = Path(results_path)
    results_path.parent.mkdir(parents=True, exist_ok=True)
    status, result = 2, None
    if sandbox.missing():
        result = refused(f"the sandbox cannot start in this container: {sandbox.missing()}")
    else:
        with tempfile.TemporaryDirectory(prefix="gemmlab-gradescope-") as work:
            work = Path(work)
            mine = work / "subs" / student_of(submission)
            mine.mkdir(parents=True)
            for path in sorted(Path(submission).rglob("*.ipynb")):
                if path.is_file() and not path.is_symlink() and \
                        ".ipynb_checkpoints" not in path.parts:
                    shutil.copyfile(path, mine / path.name)
            (work / "points.json").write_text(json.dumps(config["points"]))
            kept = secret.write(work, bytes.fromhex(config["secret"]))
            status = grade(work / "subs", out=work / "out", lesson=config["lesson"],
                           points_file=work / "points.json", seed_file=kept, jobs=1)
            if status == 0:
                result = results(json.loads((work / "out" / "grades.json").read_text()))
            else:
                result = refused("nothing graded: no notebook of a lesson (an .ipynb named "
                                 "NN_... as handed out) in the submission" if status == 2
                                 else f"the grader stopped (exit status {status})")
    results_path.write_text(json.dumps(result, indent=2) + "\n")
    return status


if __name__ == "__main__":
    sys.exit(run(*sys.argv[1:3]))
