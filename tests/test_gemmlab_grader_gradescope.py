"""The Gradescope autograder, used as Gradescope uses it: the zip built by the command, unpacked
into an /autograder layout (source/, submission/, submission_metadata.json), run_autograder's
command run on a student's notebook, and results.json checked against Gradescope's documented
format (gradescope-autograders.readthedocs.io/en/latest/specs/) and read back; where the sandbox
cannot start (a stand-in bwrap that fails, and the real one in a container like Gradescope's,
tests/docker_like.py), nothing of the submission runs and results.json says why."""
import json
import os
import subprocess
import sys
import zipfile

import jsonschema
import pytest

from gemmlab.grading.bank import get_question, lesson_questions
from gemmlab_grader import gradescope, sandbox
import docker_like
from test_gemmlab_grader_grade import _write
from test_gemmlab_grader_sandbox import WORKS_HERE

# Gradescope's results.json, as its specification describes it
TEST = {"type": "object", "additionalProperties": False,
        "properties": {"score": {"type": "number"}, "max_score": {"type": "number"},
                       "status": {"enum": ["passed", "failed"]}, "name": {"type": "string"},
                       "name_format": {"type": "string"}, "number": {"type": "string"},
                       "output": {"type": "string"}, "output_format": {"type": "string"},
                       "tags": {"type": "array", "items": {"type": "string"}},
                       "visibility": {"$ref": "#/$defs/visibility"},
                       "extra_data": {"type": "object"}}}
SCHEMA = {"type": "object", "additionalProperties": False,
          "$defs": {"visibility": {"enum": ["hidden", "after_due_date", "after_published",
                                            "visible"]}},
          "anyOf": [{"required": ["score"]},
                    {"required": ["tests"], "properties": {"tests": {"items": {
                        "required": ["score"]}}}}],
          "properties": {"score": {"type": "number"}, "execution_time": {"type": "number"},
                         "output": {"type": "string"}, "output_format": {"type": "string"},
                         "test_output_format": {"type": "string"},
                         "test_name_format": {"type": "string"},
                         "visibility": {"$ref": "#/$defs/visibility"},
                         "stdout_visibility": {"$ref": "#/$defs/visibility"},
                         "extra_data": {"type": "object"},
                         "tests": {"type": "array", "items": TEST},
                         "leaderboard": {"type": "array"}}}


@pytest.fixture(scope="module")
def autograder(tmp_path_factory):
    root = tmp_path_factory.mktemp("autograder")
    done = subprocess.run([sys.executable, "-m", "gemmlab_grader", "gradescope", "--out",
                           root / "autograder.zip"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    with zipfile.ZipFile(root / "autograder.zip") as z:
        z.extractall(root / "source")
        modes = {i.filename: i.external_attr >> 16 for i in z.infolist()}
    return root, modes


def _submit(root, *sources, path=None, wrap=lambda argv: argv):
    """run_autograder's command on a submission of one notebook (``wrap``: what runs it);
    (exit status, results.json)."""
    _write(root / "submission" / "01_numbers_and_precision.ipynb", *sources)
    (root / "submission_metadata.json").write_text(json.dumps(
        {"users": [{"email": "ada@uni.edu", "id": 4711, "name": "Ada"}]}))
    env = dict(os.environ, PYTHONPATH=str(root / "source"), GEMMLAB_BACKEND="sim")
    if path:
        env["PATH"] = path
    done = subprocess.run(wrap([sys.executable, "-m", "gemmlab_grader.gradescope",
                                root / "submission", root / "results" / "results.json"]),
                          cwd=root / "source", env=env, capture_output=True, text=True, timeout=600)
    return done.returncode, json.loads((root / "results" / "results.json").read_text())


def test_the_zip_has_gradescopes_two_scripts_at_its_root_and_the_grader(autograder):
    root, modes = autograder
    assert modes["setup.sh"] & 0o111 and modes["run_autograder"] & 0o111
    assert "apt-get install" in (root / "source" / "setup.sh").read_text()
    assert "bubblewrap" in (root / "source" / "setup.sh").read_text()
    assert "gemmlab_grader.gradescope" in (root / "source" / "run_autograder").read_text()
    for part in ("gemmlab_grader/grade.py", "gemmlab/grading/bank/l01.py", "requirements.txt",
                 "solutions/05_tiled_gemm_exercises.ipynb", gradescope.CONFIG):
        assert (root / "source" / part).is_file(), part


@pytest.mark.skipif(not WORKS_HERE, reason="bubblewrap is not installed")
def test_a_submission_gets_results_json_in_gradescopes_format_with_its_points(autograder):
    root, _ = autograder
    status, result = _submit(root, "weights_gib = 7e9 * 2 / 2**30")
    assert status == 0, result
    jsonschema.validate(result, SCHEMA)
    tests = {t["name"]: t for t in result["tests"]}
    assert sorted(tests) == sorted(lesson_questions("01"))
    assert tests["01.weights_gib"]["status"] == "passed"
    assert tests["01.weights_gib"]["score"] == tests["01.weights_gib"]["max_score"] == 2
    total = sum(get_question(q).points for q in lesson_questions("01"))
    assert result["score"] == 2 and f"2 of {total} points" in result["output"]


def test_where_the_sandbox_cannot_start_nothing_runs_and_results_json_says_why(autograder,
                                                                               tmp_path):
    root, _ = autograder
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "bwrap").write_text("#!/bin/sh\necho 'bwrap: Creating new namespace failed: "
                                "Operation not permitted' >&2\nexit 1\n")
    (fake / "bwrap").chmod(0o755)
    status, result = _submit(root, "open('/tmp/gemmlab-pwned', 'w').close()",
                             path=f"{fake}:{os.environ['PATH']}")
    assert status != 0
    jsonschema.validate(result, SCHEMA)
    assert result["output"].startswith("NOT GRADED: the sandbox cannot start")
    assert "Operation not permitted" in result["output"] and result["visibility"] == "hidden"
    assert not os.path.exists("/tmp/gemmlab-pwned")


@pytest.mark.skipif(not docker_like.usable(), reason="needs root, x86_64 and setpriv")
@pytest.mark.skipif(sandbox.bwrap() is None, reason="bubblewrap is not installed here")
def test_in_a_container_like_gradescopes_the_real_bubblewrap_cannot_start_and_nothing_runs(
        autograder):
    """Root without CAP_SYS_ADMIN under Docker's default seccomp answers: no user namespaces."""
    root, _ = autograder
    status, result = _submit(root, "open('/tmp/gemmlab-pwned-docker', 'w').close()",
                             wrap=docker_like.argv)
    assert status != 0
    jsonschema.validate(result, SCHEMA)
    assert result["output"].startswith("NOT GRADED: the sandbox cannot start")
    assert "No permissions to create new namespace" in result["output"], result["output"]
    assert not os.path.exists("/tmp/gemmlab-pwned-docker")
