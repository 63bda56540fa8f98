"""``gl.progress()`` and ``gemmlab progress [DIR]``, one implementation (:func:`report`): each
lesson's questions passed, failed, not attempted and revealed, from the student's own notebooks:
a line per notebook as it is judged, then a table that fits 100 columns and a bar per lesson.

The verdicts (:func:`verdicts`, also ``gemmlab progress DIR --json``) are judged here, on the
student's machine, with no grader (a release has none) and no sandbox: the student's own work,
trusted. Each exercise notebook runs top to bottom in a fresh kernel (errors and all, a limit per
cell), through the course's notebook runner (:class:`gemmlab.notebook_run.CountingClient`), then
:func:`gemmlab.judging.collected.extract` collects its answers in that kernel, and each is judged
as ``check()`` and the grader judge it. A notebook still exactly as handed out is not run: "not
attempted". The reveals come from the student's record (:mod:`gemmlab.grading.student`).

The notebooks run in a small pool of child processes (:data:`WORKERS` at a time), started fresh
("spawn"): each runs its notebook on an event loop of its own, so ``gl.progress()`` works inside a
running Jupyter kernel (whose loop is busy running the cell), and two notebooks take the time of
one on two cores.
"""
import asyncio
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from jupyter_client.kernelspec import KernelSpecManager

from .. import course
from ..judging import FAIL, NOT_ATTEMPTED, PASS, values
from ..judging import runtime
from ..judging.cell import judge_alone
from ..notebook_run import CellStopped, CountingClient, DeadKernelError, \
    LocalAsyncKernelManager
from ..judging import collected
from . import student
from .bank import lesson_questions, questions
from .checker import judge_question

COLUMNS = ("passed", "failed", "not attempted", "revealed")
BAR = 40
CELL_TIMEOUT = 300          # seconds a cell of the student's notebook may take (then interrupted)
WORKERS = 2                 # notebooks judged at once (each in a child with its own kernel)


def _kernel_manager(workdir):
    """A kernel of this Python that imports this copy of gemmlab (a kernel spec in ``workdir``)."""
    spec = Path(workdir) / "kernels" / "gemmlab-progress"
    spec.mkdir(parents=True)
    search = [str(Path(__file__).resolve().parents[2]), os.environ.get("PYTHONPATH", "")]
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "env": {"PYTHONPATH": os.pathsep.join(filter(None, search))},
        "display_name": "gemmlab progress", "language": "python"}))
    specs = KernelSpecManager(kernel_dirs=[str(spec.parent)], ensure_native_kernel=False)
    return LocalAsyncKernelManager(kernel_name=spec.name, kernel_spec_manager=specs)


def collect(data, requests):
    """{question id: entry} (:func:`gemmlab.judging.collected.extract`'s) once the notebook
    ``data`` (bytes) has run in a fresh kernel, its code cells in order, errors allowed; {} when
    it is not a notebook or its run stopped (a cell that ignored the interrupt, a dead kernel)."""
    try:
        cells = collected.code_cells(data)
    except (ValueError, RecursionError):
        return {}
    with tempfile.TemporaryDirectory(prefix="gemmlab-progress-") as workdir:
        answers = Path(workdir) / "answers.json"
        nb = collected.notebook([c for c in cells if c.strip()], requests, answers)
        client = CountingClient(nb, km=_kernel_manager(workdir), allow_errors=True,
                                timeout=CELL_TIMEOUT, startup_timeout=120, iopub_timeout=10,
                                shutdown_kernel="immediate", record_timing=False)
        try:
            asyncio.run(client.async_execute(cwd=workdir, stdin=subprocess.DEVNULL,
                                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            return json.loads(answers.read_text())["answers"]
        except (CellStopped, DeadKernelError, RuntimeError, OSError, ValueError, KeyError):
            return {}


def _judge(q, entry):
    if entry is None or entry.get("missing"):
        return NOT_ATTEMPTED
    if "source" in entry:           # a Python answer in its runtime, a lab's cell in a worker
        judge_code = runtime.judge if runtime.serves(q) else judge_alone
        return judge_code(q, str(entry["source"]), str(entry.get("name")))[0]
    if "value" not in entry:
        return FAIL
    try:
        return judge_question(q, values.decode(entry["value"])).status
    except values.DecodeError:
        return FAIL


def _handed_out(name):
    """The bytes of the exercise notebook handed out now for ``name`` (its current or its former
    name), or None."""
    try:
        return (course.path("exercises") / course.current_exercise_name(name)).read_bytes()
    except OSError:             # FileNotFoundError: an install without exercises/
        return None


def judge_notebook(path):
    """{question id: status} for the exercise notebook ``path`` (its lesson from its name)."""
    ids = lesson_questions(path.name[:2])
    data = Path(path).read_bytes()
    if data == _handed_out(path.name):
        return dict.fromkeys(ids, NOT_ATTEMPTED)
    bank = questions()
    answers = collect(data, [{"id": qid, "answer_name": bank[qid].answer_name,
                              "code": bank[qid].is_code} for qid in ids])
    return {qid: _judge(bank[qid], answers.get(qid)) for qid in ids}


def _counts(statuses):
    """(passed, failed, not attempted) among ``statuses``."""
    return tuple(sum(s == want for s in statuses.values()) for want in (PASS, FAIL, NOT_ATTEMPTED))


def _handed_out_names():
    try:
        return {path.name for path in course.path("exercises").glob("[0-9][0-9]_*.ipynb")}
    except FileNotFoundError:   # an install without exercises/: the newest counts
        return set()


def _one_per_lesson(folder, say):
    """The exercise notebooks ``NN_*.ipynb`` of ``folder`` that count, one per lesson, as the
    grader counts them: the one under the name handed out now, else the newest (a notebook under
    its former name, ``05_tiled_gemm.ipynb``, is the lesson's too); ``say`` names the others."""
    groups, handed_out = {}, _handed_out_names()
    for path in sorted(folder.glob("[0-9][0-9]_*.ipynb")):
        groups.setdefault(path.name[:2], []).append(path)
    chosen = []
    for group in groups.values():
        counted = max(group, key=lambda p: (p.name in handed_out, p.stat().st_mtime, p.name))
        if len(group) > 1:
            say(f"lesson {counted.name[:2]}: {counted.name} counts (the handed-out name, else the "
                f"newest); not counted: {', '.join(p.name for p in group if p != counted)}")
        chosen.append(counted)
    return chosen


def verdicts(work, lessons=(), say=None, workers=WORKERS):
    """{lesson: {question id: status}} for the exercise notebooks ``NN_*.ipynb`` of the student
    folder ``work``, one per lesson (:func:`_one_per_lesson`); ``lessons``: only these, two digits
    each (none: every lesson of the bank). ``say(text)`` hears what is being done, from the
    start: how many notebooks run, then each one as its verdicts come."""
    folder = Path(work) / "exercises"
    if not folder.is_dir():
        raise ValueError(f"{folder}/ does not exist: give your student folder (the one "
                         f"`gemmlab work` made)")
    say = say or (lambda text: None)
    found, todo = {}, []
    for path in _one_per_lesson(folder, say):
        lesson = path.name[:2]
        if not lesson_questions(lesson) or (lessons and lesson not in lessons):
            continue
        if path.read_bytes() == _handed_out(path.name):     # not run: no child needed
            found[lesson] = dict.fromkeys(lesson_questions(lesson), NOT_ATTEMPTED)
        else:
            todo.append(path)
    say(f"{len(found)} notebook(s) as handed out (not attempted); {len(todo)} of yours to run, "
        f"{min(workers, len(todo)) or 1} at a time,")
    say("each top to bottom in a fresh kernel (up to a few minutes each on the simulator)"
        + (":" if todo else ""))
    for line in textwrap.wrap(", ".join(path.name for path in todo), 96):
        say(f"  {line}")
    if todo:
        start = time.monotonic()
        pool = ProcessPoolExecutor(min(workers, len(todo)),
                                   mp_context=multiprocessing.get_context("spawn"))
        try:
            running = {pool.submit(judge_notebook, path): path for path in todo}
            for done, future in enumerate(as_completed(running), start=1):
                path = running[future]
                found[path.name[:2]] = future.result()
                passed, failed, left = _counts(found[path.name[:2]])
                say(f"[{done}/{len(todo)}] {path.name}: {passed} passed, {failed} failed, {left} "
                    f"not attempted ({time.monotonic() - start:.0f} s)")
        finally:        # after an interrupt (Jupyter's stop), return now: no notebook waits
            pool.shutdown(wait=False, cancel_futures=True)
    return dict(sorted(found.items()))


def tally(found, revealed):
    """[(lesson, passed, failed, not attempted, revealed)] in lesson order."""
    rows = []
    for lesson, statuses in sorted(found.items()):
        rows.append((lesson, *_counts(statuses), sum(q in revealed for q in statuses)))
    return rows


def table(rows):
    """The rows as text, at most 100 columns wide: counts, then a bar (# passed, x failed, .
    not attempted)."""
    lines = [f"{'lesson':6}  {'passed':>6}  {'failed':>6}  {'not att.':>8}  {'revealed':>8}  "
             f"{'# passed  x failed  . not attempted':{BAR}}"]
    for lesson, passed, failed, todo, shown in rows:
        total = max(passed + failed + todo, 1)
        cells = [round(BAR * n / total) for n in (passed, failed)]
        bar = "#" * cells[0] + "x" * cells[1]
        lines.append(f"{lesson:6}  {passed:6}  {failed:6}  {todo:8}  {shown:8}  "
                     f"{bar + '.' * (BAR - len(bar))}")
    return "\n".join(lines)


def figure(rows):
    """A horizontal stacked bar per lesson (passed, failed, not attempted; revealed marked)."""
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8, 0.35 * len(rows) + 1.2))
    labels = [lesson for lesson, *_ in rows]
    left = [0] * len(rows)
    for index, (name, color) in enumerate(zip(COLUMNS[:3], ("tab:green", "tab:red", "lightgray"),
                                              strict=True)):
        counts = [row[1 + index] for row in rows]
        ax.barh(labels, counts, left=left, color=color, label=name)
        left = [a + b for a, b in zip(left, counts, strict=True)]
    for y, row in enumerate(rows):
        if row[4]:
            ax.text(left[y] + 0.2, y, f"{row[4]} revealed", va="center", fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("questions")
    ax.set_ylabel("lesson")
    ax.set_title("Your progress")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    return fig


def report(work, lessons=(), revealed=None, say=print):
    """What ``gl.progress()`` and ``gemmlab progress`` show: each notebook as it is judged
    (``say``), then the table; returns the rows (:func:`tally`). ``revealed``: the questions whose
    worked answer was shown (default: the record in ``work``)."""
    found = verdicts(work, lessons, say=say)
    rows = tally(found, set(revealed_in(work) if revealed is None else revealed))
    print(table(rows), flush=True)
    return rows


def progress(work=None, lessons=(), draw=True):
    """Print each notebook's counts as it is judged and the table of the student folder ``work``
    (default: the one this notebook is in), and draw the bars; returns None, so that Jupyter shows
    nothing more (``gemmlab progress DIR --json`` gives the verdicts as data)."""
    work = Path(work) if work is not None else student.folder()
    if work is None:
        raise ValueError("this notebook is not in a student folder: give the folder, "
                         "gl.progress('work')")
    revealed = student.load()["revealed"] if work == student.folder() else None
    rows = report(work, lessons, revealed, say=lambda text: print(text, flush=True))
    if draw:
        figure(rows)


def revealed_in(work):
    try:
        return json.loads((Path(work) / student.PROGRESS).read_text())["revealed"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
