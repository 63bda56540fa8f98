"""`gemmlab grade`: the command line, grading small notebooks, the limits a cell meets, the
boundary around each notebook, and the package copy (the attacks are in
test_gemmlab_grader_grade_hostile.py)."""
import json
import os
import subprocess
import sys
import time

import nbformat
import numpy as np
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from gemmlab.grading.bank import get_question, lesson_questions
from gemmlab_grader import grade, publish, report, sandbox, secret, submissions, withheld_bank
from gemmlab_grader.folders import FolderSnapshot
from gemmlab_grader.grade import NotebookGrade, Settings, grade_notebook
from gemmlab_grader.submissions import Submission, find_submissions, lesson_of
from test_gemmlab_grader_isolate import processes_with
from test_gemmlab_grader_sandbox import WHERE_IT_WORKS, WORKS_HERE

# limits, not expectations; in the sandbox where bubblewrap works
FAST = Settings(timeout=60, notebook_timeout=600, seed=3, sandbox=WORKS_HERE)


def _write(path, *sources):
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(new_notebook(cells=[new_code_cell(s) for s in sources]), path)


def _cli(*args, cwd):
    """The grader's command; where bubblewrap does not work, without the sandbox unless the
    test chose."""
    chosen = any(str(a) in ("--sandbox", "--trusted") for a in args)
    args = [*args, *([] if chosen else WHERE_IT_WORKS)]
    return subprocess.run([sys.executable, "-m", "gemmlab_grader", *map(str, args)],
                          cwd=cwd, capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, GEMMLAB_BACKEND="sim"))


# --- finding submissions ------------------------------------------------------------------------

def test_students_are_folders_or_file_names_and_checkpoints_are_skipped(tmp_path):
    _write(tmp_path / "alice" / "01_a.ipynb", "x = 1")
    _write(tmp_path / "alice" / ".ipynb_checkpoints" / "01_a-checkpoint.ipynb", "x = 1")
    _write(tmp_path / "bob.ipynb", "x = 1")
    (tmp_path / "notes.txt").write_text("not a notebook")
    found = find_submissions(FolderSnapshot(tmp_path))
    assert [(s.student, s.notebook) for s in found] == [("alice", "alice/01_a.ipynb"),
                                                        ("bob", "bob.ipynb")]
    assert all(s.data and not s.problem for s in found)


def test_links_folders_and_fifos_named_like_notebooks_are_reported_not_opened(tmp_path):
    (tmp_path / "x.ipynb").mkdir()
    os.mkfifo(tmp_path / "y.ipynb")
    os.symlink("/etc/passwd", tmp_path / "z.ipynb")
    problems = {s.student: s.problem for s in find_submissions(FolderSnapshot(tmp_path))}
    assert problems == {"x": "a folder, not a notebook file",
                        "y": "not a regular file (a FIFO, socket or device)",
                        "z": "a symbolic link, not followed"}


def test_a_notebook_too_large_is_not_read(tmp_path, monkeypatch):
    monkeypatch.setattr(submissions, "MAX_NOTEBOOK_BYTES", 100)
    (tmp_path / "big.ipynb").write_bytes(b"x" * 101)
    [found] = find_submissions(FolderSnapshot(tmp_path, max_file=100))
    assert (found.data, found.problem) == (None, "larger than 0 MiB")


@pytest.mark.parametrize("name, forced, lesson", [
    ("01_numbers_and_precision.ipynb", None, "01"), ("07_mine.ipynb", None, "07"),
    ("alice.ipynb", None, None), ("alice.ipynb", "04", "04"), ("01_x.ipynb", "02", "02"),
    ("99_x.ipynb", None, None), ("1_x.ipynb", None, None),
])
def test_the_lesson_comes_from_the_option_or_the_file_name(name, forced, lesson):
    assert lesson_of(Submission("s", name, None), forced) == lesson


# --- the command line ---------------------------------------------------------------------------

@pytest.mark.parametrize("option", [["--timeout", "0"], ["--timeout", "-1"], ["--timeout", "x"],
                                    ["--notebook-timeout", "0"], ["--memory", "-5"],
                                    ["--seed", "-1"], ["--lesson", "abc"]])
def test_bad_options_are_refused_with_a_one_line_error(tmp_path, option):
    done = _cli(tmp_path, *option, cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "expected a" in done.stderr.splitlines()[-1]


@pytest.mark.parametrize("args, message", [
    (["subs", "--out", "subs/grades"], "--out must lie outside"),
    (["subs", "--out", "subs"], "--out must lie outside"),
    (["missing"], "is not a folder of submissions"),
    (["empty"], "nothing graded: no .ipynb files"),
    (["unnamed"], "nothing graded: none of the 1 notebook(s)"),
    (["subs", "--shard", f"{3 - submissions.shard_of('a', 2)}/2"],
     "nothing graded: shard"),
    (["subs", "--lesson", "88"], "no such lesson"),
    (["subs", "--points", "bad.json"], "bad.json: '07.nope' is no question"),
    (["subs", "--roster", "bad.json"], "the header row is"),
    (["subs", "--seed-file", "bad.json"], "expected the file a grading run wrote"),
])
def test_unusable_folders_and_options_stop_before_anything_runs(tmp_path, args, message):
    _write(tmp_path / "subs" / "a" / "01_x.ipynb", "x = 1")
    _write(tmp_path / "unnamed" / "a" / "homework.ipynb", "x = 1")
    (tmp_path / "bad.json").write_text('{"07.nope": 1}')
    (tmp_path / "empty").mkdir()
    done = _cli(*args, cwd=tmp_path)
    assert done.returncode == 2 and message in done.stderr
    assert not (tmp_path / "subs" / "grades").exists()


def test_without_bubblewrap_the_default_sandbox_is_refused_with_the_way_out(tmp_path, monkeypatch,
                                                                            capsys):
    monkeypatch.setattr(grade.sandbox, "trial", lambda: (None, "bubblewrap is broken"))
    _write(tmp_path / "subs" / "a" / "01_x.ipynb", "x = 1")
    assert grade.main(tmp_path / "subs", out=tmp_path / "out") == 2
    err = capsys.readouterr().err
    assert "refusing to grade: bubblewrap is broken" in err and "apt install bubblewrap" in err
    assert "--trusted" in err and not (tmp_path / "out").exists()


@pytest.mark.parametrize("option, message", [
    (["--shard", "0/4"], "counted from 1"), (["--shard", "5/4"], "counted from 1"),
    (["--shard", "x"], "expected a shard"), (["--jobs", "0"], "expected a whole number"),
    (["--sandbox", "--trusted"], "contradict"), (["--seed", "1", "--seed-file", "f"], "contradict"),
])
def test_bad_shards_and_jobs_are_refused(tmp_path, option, message):
    done = _cli("subs", *option, cwd=tmp_path)
    assert done.returncode == 2 and message in done.stderr.splitlines()[-1]


def test_trusted_grades_without_the_sandbox_and_says_it_guards_nothing(tmp_path):
    _write(tmp_path / "subs" / "a" / "01_x.ipynb", "weights_gib = 7e9 * 2 / 2**30")
    done = _cli("subs", "--trusted", "--jobs", "2", "--out", "out", "--timeout", "20",
                cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "WARNING: --trusted" in done.stderr and "NO sandbox (--trusted)" in done.stderr
    info = json.loads((tmp_path / "out" / "grades.json").read_text())
    assert (info["sandbox"], info["trusted"], info["jobs"]) == (False, True, 2)
    assert info["notebooks"][0]["results"]["01.weights_gib"] == "pass"


def test_one_notebook_per_student_with_lesson_and_the_protections_printed(tmp_path):
    _write(tmp_path / "subs" / "alice.ipynb", "weights_gib = 7e9 * 2 / 2**30")
    _write(tmp_path / "subs" / "bob.ipynb", "weights_gib = 7")
    done = _cli("subs", "--lesson", "1", "--out", "out", "--timeout", "20", "--seed", "987654321",
                cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "protections in this run" in done.stderr
    assert "hidden cases drawn per student from this run's secret" in done.stderr
    assert "seed" not in json.loads((tmp_path / "out" / "grades.json").read_text())
    hidden = (987654321).to_bytes(8, "big").hex()       # the secret, as its private file holds it
    private = tmp_path / "out" / secret.FILE
    assert hidden in private.read_text() and private.stat().st_mode & 0o777 == 0o600
    for written in (tmp_path / "out").rglob("*"):       # and in no report
        if written.is_file() and written != private:
            assert "987654321" not in written.read_text(), written.name
            assert hidden not in written.read_text(), written.name
    assert "987654321" not in done.stdout + done.stderr
    rows = {r["student"]: r for r in json.loads((tmp_path / "out" / "grades.json").read_text())
            ["notebooks"]}
    total = len(lesson_questions(1))           # every question of lesson 01 counts
    assert (rows["alice"]["passed"], rows["alice"]["total"], rows["alice"]["lesson"]) == (1, total, "01")
    assert rows["bob"]["results"]["01.weights_gib"] == "fail"
    worth = sum(get_question(q).points for q in lesson_questions(1))      # printed in points
    assert (rows["alice"]["score"], rows["alice"]["possible"]) == (2, worth)
    assert "alice" in done.stdout and f"2/{worth}" in done.stdout


# --- grading small notebooks --------------------------------------------------------------------

@pytest.fixture(scope="module")
def small(tmp_path_factory):
    folder = tmp_path_factory.mktemp("small")
    _write(folder / "02_gemm.ipynb",
           "import numpy as np",
           "Y = np.array([[58, 64], [139, 154]])",
           "weight_shape = [2048, 512]",                      # a list, not a tuple
           "b_row_stride = 'seventy'",
           "raise KeyError('half-way')",
           "def row_major_index(r, c, rows, cols):\n    return r * cols + c",
           "naive_matmul = np.matmul",                        # not a function of a cell
           "address = 4096 + 27 * 4\nprint('x' * 2_000_000)")
    return grade_notebook(folder / "02_gemm.ipynb", settings=FAST)


def test_answers_are_collected_by_name_and_judged_by_the_grader(small):
    assert small.results["02.two_neurons"] == "pass"
    assert small.results["02.byte_address"] == "pass"
    assert small.results["02.row_major_index"] == "pass"       # code, on hidden cases
    assert "right on all 6 test cases" in small.feedback["02.row_major_index"]


def test_a_missing_variable_is_not_attempted_and_a_wrong_type_says_so(small):
    assert small.results["02.linear_layer_output"] == "not attempted"
    assert "no variable Y_linear" in small.feedback["02.linear_layer_output"]
    assert "write it with round brackets" in small.feedback["02.linear_weight_shape"]
    assert "expected a whole number, got str 'seventy'" in small.feedback["02.b_row_stride"]


def test_a_code_answer_must_be_defined_in_a_cell(small):
    assert small.results["02.naive_matmul"] == "fail"
    assert "expected a function defined in a notebook cell, got ufunc" in \
        small.feedback["02.naive_matmul"]


def test_errors_and_big_output_are_noted_and_the_notebook_goes_on(small):
    assert "cell 5 raised KeyError: 'half-way'" in small.notes
    assert "printed 1 MiB of output (not kept)" in small.notes


# Each case gives one limit far more room than the other, so that the one meant to stop the cell
# does whatever the machine's load: a sleeping cell uses no CPU; a busy one reaches 2 CPU seconds
# long before 60 s of wall clock.
@pytest.mark.slow
@pytest.mark.parametrize("stubborn, timeout, cpu, note", [
    ("time.sleep(600)", 3, 600, "cell 2 ran past 3 s and did not stop when interrupted"),
    ("while True:\n    pass", 60, 2, "cell 2 used more than 2 s of CPU: its kernel was stopped"),
    ("kernel = get_ipython().kernel\nsend = kernel.session.send\n"         # its reply is lost
     "kernel.session.send = lambda stream, kind, *a, **k: None if kind == 'execute_reply' "
     "else send(stream, kind, *a, **k)", 3, 600, "cell 2 finished but its reply never came (lost)"),
])
def test_a_cell_that_ignores_the_interrupt_stops_the_run_with_the_reason(tmp_path, stubborn,
                                                                         timeout, cpu, note):
    _write(tmp_path / "01_x.ipynb", "weights_gib = 7e9 * 2 / 2**30",
           "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\n" + stubborn)
    result = grade_notebook(tmp_path / "01_x.ipynb", settings=Settings(
        timeout=timeout, cell_cpu=cpu, notebook_timeout=600, seed=1, sandbox=WORKS_HERE))
    assert result.notes[0] == note
    assert result.passed == 0 and "not graded" in result.feedback["01.weights_gib"]


@pytest.mark.slow
def test_a_notebook_past_its_total_time_is_stopped(tmp_path):
    _write(tmp_path / "01_x.ipynb", *["import time\ntime.sleep(2)"] * 5)
    result = grade_notebook(tmp_path / "01_x.ipynb",
                            settings=Settings(timeout=10, notebook_timeout=5, seed=1,
                                              sandbox=WORKS_HERE))
    assert result.notes[0] == "the notebook ran past 5 s and was stopped"


# --- reports ------------------------------------------------------------------------------------

def _grade(student, note=""):
    g = NotebookGrade(student, f"{student}/01_x.ipynb", "01", {"01.weights_gib": "pass"},
                      {"01.weights_gib": "ok"})
    if note:
        g.notes.append(note)
    return g


def test_the_table_escapes_control_and_format_characters():
    text = report.table([_grade("e\x1b[2Jve\r", "boom\r\x1b[1Aall pass\u202e\x07")])
    assert not any(c in text for c in "\x1b\r\u202e\x07")
    assert "e\\x1b[2Jve\\r" in text and "boom\\r\\x1b[1Aall pass\\u202e\\x07" in text


def test_the_csv_defuses_spreadsheet_formulas():
    text = report.csv_text([_grade("=HYPERLINK(\"http://x\")", "-2+3")])
    assert "'=HYPERLINK" in text and ",'-2+3" in text


def test_reports_replace_a_planted_link_instead_of_writing_through_it(tmp_path):
    target = tmp_path / "precious.txt"
    target.write_text("keep me")
    out = tmp_path / "out"
    out.mkdir()
    os.symlink(target, out / "grades.csv")
    publish.write_all([_grade("alice")], out, {"seed": 1})
    assert target.read_text() == "keep me"
    assert not (out / "grades.csv").is_symlink()
    assert json.loads((out / "grades.json").read_text())["notebooks"][0]["passed"] == 1


# --- the grader's own files ---------------------------------------------------------------------

def test_the_copy_holds_gemmlab_without_references_and_the_grader(tmp_path):
    snap = withheld_bank.PackageSnapshot()
    assert {name.split("/")[0] for name in snap.files} == {"gemmlab", "gemmlab_grader"}
    assert not any("__pycache__" in name for name in snap.files)
    public = [{"id": "01.weights_gib", "prompt": "p", "answer_name": "weights_gib"}]
    copy = snap.write_copy(tmp_path, public)
    assert (copy / "gemmlab_grader" / "runner.py").read_bytes() == \
        snap.files["gemmlab_grader/runner.py"]
    stub = (copy / "gemmlab" / "grading" / "bank" / "l01.py").read_text()
    assert "from gemmlab_grader.withheld_bank import questions_of" in stub
    assert not (copy / "gemmlab" / "grading" / "bank" / "l02.py").exists()


@pytest.mark.skipif(not WORKS_HERE, reason="bubblewrap is not installed")
def test_in_the_sandbox_a_detached_process_dies_with_its_tree(tmp_path):
    marker = f"gemmlab-test-orphan-{os.getpid()}"
    code = ("import os, subprocess, sys, time\n"
            f"child = 'import os, time\\nif os.fork(): os._exit(0)\\nos.setsid()\\ntime.sleep(60)'\n"
            f"subprocess.Popen([sys.executable, '-c', child, {marker!r}], env={{}})\n"
            "time.sleep(30)\n")
    argv = sandbox.command([sys.executable, "-c", code], tmp_path)
    tree = sandbox.Tree(argv, sandbox.Limits(), cwd=tmp_path)
    deadline = time.monotonic() + 20
    while not processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_with(marker)
    tree.kill()
    deadline = time.monotonic() + 30          # the PID namespace goes with bubblewrap (a busy machine is slow to reap)
    while processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = processes_with(marker)
    assert not left, [_state_of(pid) for pid in left]      # which ones, in what state (rare: CI)


@pytest.mark.skipif(not WORKS_HERE, reason="bubblewrap is not installed")
def test_the_sandboxs_first_process_is_in_the_trees_process_group_where_a_kill_reaches_it(tmp_path):
    """bwrap's child is PID 1 of the sandbox: its death ends everything inside. With bwrap's
    --new-session it had a session of its own, and only bwrap's parent-death signal ended it,
    which once did not come (the test above saw the namespace outlive its leader by 30 s)."""
    tree = sandbox.Tree(sandbox.command([sys.executable, "-c", "import time; time.sleep(30)"],
                                        tmp_path), sandbox.Limits(), cwd=tmp_path)
    try:
        deadline, inside = time.monotonic() + 20, []
        while not inside and time.monotonic() < deadline:
            time.sleep(0.05)
            inside = [pid for pid in map(int, filter(str.isdigit, os.listdir("/proc")))
                      if _ppid(pid) == tree.popen.pid]
        assert inside and all(os.getpgid(pid) == tree.popen.pid for pid in inside)
        tree.kill()
        deadline = time.monotonic() + 10
        while any(_ppid(pid) for pid in inside) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert all(_ppid(pid) is None for pid in inside)       # killed with the group
    finally:
        tree.kill()


def _ppid(pid):
    """The parent of a live process, None once it is gone (or a zombie)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state, ppid = f.read().rsplit(")", 1)[1].split()[:2]
    except OSError:
        return None
    return None if state == "Z" else int(ppid)


def _state_of(pid):
    """'pid state ppid: command' of a live process, to say what outlived a kill."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state, ppid = f.read().rsplit(")", 1)[1].split()[:2]
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            command = f.read().replace(b"\0", b" ")[:80].decode(errors="replace")
    except OSError:
        return f"{pid} gone"
    return f"{pid} {state} {ppid}: {command}"


@pytest.mark.parametrize("field", ["cpu_seconds", "memory_bytes", "file_bytes", "processes"])
def test_limits_must_be_positive_whole_numbers(field):
    with pytest.raises(ValueError, match=field):
        sandbox.Limits(**{field: 0})


def test_each_students_hidden_cases_derive_from_the_run_secret_and_their_name():
    secret = b"k" * 32
    alice = grade.case_seed(secret, "alice", "07.lab_ring")
    assert alice == grade.case_seed(secret, "alice", "07.lab_ring")        # a run repeats
    assert alice != grade.case_seed(secret, "bob", "07.lab_ring")          # students differ
    assert alice != grade.case_seed(secret, "alice", "13.lab_groups")      # questions differ
    assert alice != grade.case_seed(b"j" * 32, "alice", "07.lab_ring")     # runs differ
    from gemmlab.grading.bank import get_question
    kind = get_question("07.lab_ring").kind
    cases = [kind.hidden(np.random.default_rng(grade.case_seed(secret, s, "07.lab_ring")))
             for s in ("alice", "bob")]
    assert cases[0] != cases[1]


def test_the_worker_gets_cases_never_a_seed_nor_the_secret(monkeypatch):
    """The attack: a kernel-lab cell read the run's seed and drew every student's hidden cases.
    Now the seed stays in the judging process: no message to the worker carries it, and its
    environment is the clean one."""
    from gemmlab.judging import cell
    from gemmlab_grader import isolate
    sent = []
    real = cell.Channel.request

    def record(self, message):
        sent.append(json.dumps(message))
        return real(self, message)
    monkeypatch.setattr(cell.Channel, "request", record)
    source = ("TILE = 16\n\n\n@cuda.jit\ndef lab_naive(A, B, C):\n    M, K = A.shape\n"
              "    N = B.shape[1]\n    row = cuda.blockIdx.y * TILE + cuda.threadIdx.y\n"
              "    col = cuda.blockIdx.x * TILE + cuda.threadIdx.x\n    if row < M and col < N:\n"
              "        acc = float32(0)\n        for k in range(K):\n"
              "            acc += A[row, k] * B[k, col]\n        C[row, col] = acc\n")
    seed = 987654321123
    result = isolate.judge_code("05.lab_naive", source, "lab_naive", seed=seed, timeout=240)
    assert result.status == "pass", result.feedback
    assert sent and not any(str(seed) in m or '"seed"' in m for m in sent)
    env = isolate.clean_env("/tmp/x")
    assert not any(str(seed) in v for v in env.values())
    # --jobs is the grader's parallelism: one BLAS/OpenMP thread per graded process
    assert all(env[f"{pool}_NUM_THREADS"] == "1" for pool in ("OMP", "OPENBLAS", "MKL", "NUMBA"))
