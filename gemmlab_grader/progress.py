"""``gemmlab-grade progress DIR [NN...]``: the verdicts on a student's own exercise notebooks,
judged on their own machine, printed as JSON {lesson: {question id: status}} (``gemmlab
progress`` and ``gl.progress()`` show them).

Trusted by construction (the student's own work on the student's machine): each notebook runs
through :func:`gemmlab_grader.runner.run` with no sandbox, and its answers are judged as
``check()`` judges them. A notebook still exactly as handed out is not run: "not attempted".
"""
import json
import sys
import tempfile
from pathlib import Path

from gemmlab import course
from gemmlab.grading.bank import lesson_questions, questions
from gemmlab.grading.checker import judge_question
from gemmlab.judging import FAIL, NOT_ATTEMPTED, values
from gemmlab.judging.cell import judge_alone

from . import runner

def _judge(q, entry):
    if entry is None or entry.get("missing"):
        return NOT_ATTEMPTED
    if "source" in entry:
        return judge_alone(q, str(entry["source"]), str(entry.get("name")))[0]
    if "value" not in entry:
        return FAIL
    try:
        return judge_question(q, values.decode(entry["value"])).status
    except values.DecodeError:
        return FAIL


def judge_notebook(path):
    """{question id: status} for the exercise notebook ``path`` (its lesson from its name)."""
    ids = lesson_questions(path.name[:2])
    data = path.read_bytes()
    handed_out = course.path("exercises") / path.name
    if handed_out.is_file() and data == handed_out.read_bytes():
        return {qid: NOT_ATTEMPTED for qid in ids}
    bank = questions()
    requests = [{"id": qid, "answer_name": bank[qid].answer_name, "code": bank[qid].is_code}
                for qid in ids]
    with tempfile.TemporaryDirectory(prefix="gemmlab-progress-") as workdir:
        _report, answers_path = runner.run(workdir, {"timeout": 300, "requests": requests}, data)
        answers = json.loads(Path(answers_path).read_text())["answers"] if answers_path else {}
    return {qid: _judge(bank[qid], answers.get(qid)) for qid in ids}


def judge_folder(work, lessons=None):
    """{lesson: {question id: status}} for the exercise notebooks of the student folder
    ``work`` (``lessons``: only these, two digits each)."""
    found = {}
    for path in sorted((Path(work) / "exercises").glob("[0-9][0-9]_*.ipynb")):
        lesson = path.name[:2]
        if lesson_questions(lesson) and (lessons is None or lesson in lessons):
            found[lesson] = judge_notebook(path)
    return found


def main(argv):
    work = argv[0] if argv else "work"
    lessons = set(argv[1:]) or None
    if not (Path(work) / "exercises").is_dir():
        print(f"gemmlab progress: {work}/exercises/ does not exist: give your student folder "
              f"(the one `gemmlab work` made)", file=sys.stderr)
        return 2
    print(json.dumps(judge_folder(work, lessons)))
    return 0
