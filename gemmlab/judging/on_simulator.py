"""A lab's check on the simulator in a fresh Python process, for a notebook on a GPU.

On a GPU backend ``numba.cuda`` is the real one, and the simulator cannot run in the same process
(the backend is chosen once, when gemmlab is imported). :func:`judge_on_simulator` runs the cell
that defines the student's kernel again in a new Python with ``GEMMLAB_BACKEND=sim`` (``python -m
gemmlab.judging.on_simulator``) and judges it there with the lab's own kind, without the
question's reference (:func:`~gemmlab.judging.beside.judge_without_reference`). It is the
student's own check of their own code: a plain subprocess with a deadline, not the grader's
confinement.

Protocol: one JSON request on stdin (``{"kind": "gemmlab.module:NAME", "question": public fields,
"source": cell text, "name": name, "seed": int or null}``), one JSON reply on stdout
(``{"status", "feedback", "picture"}``: a kernel lab's picture of the run as plain data, or null,
which ``check(..., show=True)`` draws); what the cell prints goes nowhere.
"""
import json
import os
import signal
import subprocess
import sys

from .beside import judge_without_reference, public_fields
from .source import run_cell
from .verdict import FAIL, NOT_ATTEMPTED, PASS
from .where import kind_spec, package_object

MODULE = "gemmlab.judging.on_simulator"
CELL_FILE = "<your cell>"


def judge_on_simulator(kind, question, source, name, seed=None, timeout=120.0):
    """(status, feedback, picture) of ``kind`` (a module-level constant of gemmlab) on the
    function ``name`` that the cell ``source`` defines, judged in a fresh process on the
    simulator: the public cases when ``seed`` is None, else hidden cases drawn from it; the
    picture is a kernel lab's plain data of the run, or None. ``timeout``: seconds for
    everything. Never raises for the student's code."""
    request = {"kind": kind_spec(kind), "question": public_fields(question),
               "source": str(source), "name": str(name), "seed": seed}
    reply, why = ask_simulator(MODULE, request, timeout)
    if reply is None:
        return FAIL, f"the check on the simulator {why}", None
    try:
        status, feedback, picture = reply["status"], str(reply["feedback"]), reply.get("picture")
    except (TypeError, KeyError):
        return FAIL, "the check on the simulator gave no verdict", None
    if status not in (PASS, FAIL, NOT_ATTEMPTED):
        return FAIL, "the check on the simulator gave no verdict", None
    return status, feedback, picture if isinstance(picture, dict) else None


def ask_simulator(module, request, timeout):
    """Run ``python -m module`` in a fresh process on the simulator backend, ``request`` (JSON)
    on its stdin: (its JSON reply, None), or (None, what went wrong: "did not finish: ..." or
    "ended without a verdict ...")."""
    env = dict(os.environ, GEMMLAB_BACKEND="sim",
               PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    process = subprocess.Popen([sys.executable, "-m", module], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                               start_new_session=True)
    try:
        out, err = process.communicate(json.dumps(request).encode("utf-8"), timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, (f"did not finish: no answer within {timeout:g} s (an endless loop, or a "
                      f"very slow one?).")
    finally:
        _kill_session(process)
    try:
        return json.loads(out.decode("utf-8")), None
    except ValueError:
        tail = err.decode("utf-8", "replace").strip()[-600:]
        return None, (f"ended without a verdict (exit status {process.returncode})"
                      + (f": {tail}" if tail else "."))


def _kill_session(process):
    """End the check's process and whatever it started in its session."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:
        pass
    process.wait()


def _judge(request):
    kind = package_object(request["kind"])
    name = str(request["name"])
    namespace, error = run_cell(str(request["source"]), CELL_FILE)
    if name not in namespace:
        if error is not None:
            return FAIL, f"your cell raised {type(error).__name__}: {str(error)[:300]}", None
        return (NOT_ATTEMPTED, f"no {name} yet. {request['question'].get('prompt', '')}".strip(),
                None)
    return judge_without_reference(kind, request["question"], namespace[name], request.get("seed"))


def main():
    reply_to = os.fdopen(os.dup(1), "w", encoding="utf-8")
    quiet = os.open(os.devnull, os.O_WRONLY)
    os.dup2(quiet, 1)               # the cell's prints go nowhere, not into the reply
    request = json.loads(sys.stdin.read())
    status, feedback, picture = _judge(request)
    reply_to.write(json.dumps({"status": status, "feedback": feedback, "picture": picture}))
    reply_to.flush()


if __name__ == "__main__":
    main()
