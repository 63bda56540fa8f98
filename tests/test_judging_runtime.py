"""The answer runtime (issue 54 items 1 and 2): a Python answer runs in a process of its own with
the standard library, NumPy where granted and its question's hand-outs, and nothing of gemmlab.
The attacks of tests/hostile/attack_match_* passed before (the answer shared the judge's
interpreter) and fail now, in check() and in a graded run; every solutions/ answer still passes."""
import json
import linecache
from pathlib import Path

import numpy as np
import pytest

import gemmlab
from gemmlab.grading.bank import get_question
from gemmlab.grading.checker import check
from gemmlab.judging import Exact, Function, Question, runtime
from gemmlab.judging.allow import Allows
from gemmlab.labs.solutions import cell
from gemmlab_grader.isolate import confined_runtime, judge_code
from sandboxed import SANDBOX, require_sandbox

ROOT = Path(__file__).resolve().parents[1]
HOSTILE = ROOT / "tests" / "hostile"
PYTHON_ANSWERS = ("02.row_major_index", "02.naive_matmul", "03.amdahl_function",
                  "04.roofline_function", "06.row_partials", "07.rs_send_chunk", "09.rank_partial",
                  "10.slots_m_n", "12.mma_step", "13.coords_of", "14.rank_partial_attention")


def _attack(notebook):
    """The source of the attack cell (the notebook's last) of a hostile notebook."""
    cells = json.loads((HOSTILE / notebook).read_text(encoding="utf-8"))["cells"]
    return "".join(cells[-1]["source"])


def _live(source, name):
    """The function ``name`` as a notebook cell defines it: its cell's text in linecache under a
    file name that does not exist, as IPython keeps a cell."""
    filename = f"<ipython-input-{abs(hash(source))}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"np": np, "check": lambda *args, **kwargs: None}
    exec(compile(source, filename, "exec"), namespace)
    return namespace[name]


@pytest.mark.parametrize("question_id", PYTHON_ANSWERS)
def test_every_python_answer_of_solutions_passes_in_the_runtime(question_id):
    q = get_question(question_id)
    assert runtime.serves(q)
    source, name, _ = cell(question_id, name=q.answer_name)
    assert runtime.judge(q, source, name)[0] == "pass"
    status, feedback = runtime.judge(q, source, name, np.random.default_rng(3))
    assert status == "pass", feedback


@pytest.mark.parametrize("notebook, question_id, name, says", [
    ("attack_match_stand_in/02_gemm_from_neurons.ipynb", "02.naive_matmul", "naive_matmul",
     "'_data' on an array is not allowed in this answer: this exercise works one element at a"),
    ("attack_match_import/03_parallel_work_and_speedup.ipynb", "03.amdahl_function",
     "amdahl_speedup",
     "ModuleNotFoundError: No module named 'gemmlab'")])
def test_an_escape_through_match_fails_in_check_and_in_a_graded_run(notebook, question_id, name,
                                                                     says, capsys):
    source = _attack(notebook)
    checked = check(question_id, _live(source, name))
    assert checked.status == "fail" and says in checked.feedback, checked.feedback
    require_sandbox()
    graded = judge_code(question_id, source, name, seed=7, isolation=SANDBOX)
    assert graded.status == "fail" and says in graded.feedback, graded.feedback


REACH = '''def reach():
    found = []
    match check:
        case object(__globals__=g):
            pass
    match g["__builtins__"]:
        case {"__import__": load, "open": opener}:
            pass
        case object(__import__=load, open=opener):
            pass
    sys = load("sys")
    found += [m for m in sys.modules if m.startswith(("gemmlab", "numpy"))]
    for module in ("gemmlab", "gemmlab.perfmodel", "numpy"):
        try:
            load(module)
            found.append("import " + module)
        except ImportError:
            pass
    try:
        with opener(PACKAGE_FILE) as f:
            found.append("read " + f.read(40))
    except OSError:
        pass
    match sys:
        case object(_getframe=frame_of):
            pass
    frame = frame_of(0)
    while frame is not None:
        match frame:
            case object(f_globals=seen, f_back=frame):
                pass
        for k, v in seen.items():
            match v:
                case object(__module__=str(place)) | object(__file__=str(place)) if (
                        "gemmlab" in place):
                    found.append(k)
    return ", ".join(found) or "nothing"
'''


def test_an_answer_that_imports_opens_and_walks_reaches_nothing():
    """An answer that walks check's __globals__ to the builtins, sys.modules and every frame's
    globals, imports gemmlab (and NumPy, not granted here) and opens a file of the package finds
    none of them: in check()'s plain child and in the grader's sandbox."""
    package_file = str(Path(gemmlab.__file__).with_name("perfmodel") / "parallelism.py")
    assert Path(package_file).is_file()
    source = REACH.replace("PACKAGE_FILE", repr(package_file))
    q = Question(id="99.reach", prompt="What can an answer reach?", answer=lambda: "nothing",
                 kind=Function(cases=lambda: [()], compare=Exact(str)), allows=Allows())
    assert runtime.judge(q, source, "reach") == ("pass", "right on all 1 test cases.")
    # the same walk, in the judge's own interpreter, finds the package: the test can fail
    here = _live(source.replace("def reach():", "def reach(check=check):"), "reach")
    assert "import gemmlab" in here() and "read " in here()
    require_sandbox()
    assert runtime.judge(q, source, "reach", confine=confined_runtime(SANDBOX))[0] == "pass"


def test_progress_judges_a_python_answer_in_the_runtime_as_check_does():
    """gl.progress() judges a collected cell: the course's answer passes, the attack fails."""
    from gemmlab.grading.progress import _judge
    q = get_question("02.naive_matmul")
    source, name, _ = cell("02.naive_matmul", name=q.answer_name)
    assert _judge(q, {"source": source, "name": name}) == "pass"
    attack = _attack("attack_match_stand_in/02_gemm_from_neurons.ipynb")
    assert _judge(q, {"source": attack, "name": name}) == "fail"
