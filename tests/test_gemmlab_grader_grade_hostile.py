"""The grader on the hostile submissions of tests/hostile (see its README): every attack fails
to change any grade but its own, the honest students get full marks, the run finishes and
writes its reports, the submissions and the packages are unchanged afterwards, and no process
and no file of the run is left.

The whole folder is graded once in the sandbox (bubblewrap; CI installs it), two notebooks at a
time, through the grader's own command (`python -m gemmlab_grader`). The attacks that reach
outside their notebook were, in earlier rounds, also graded without the sandbox; now the grader
refuses that (`--no-sandbox`, or a bubblewrap missing or unable to start), through `gemmlab grade`
(the alias the course's command keeps), before any of their code runs."""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from gemmlab.grading.bank import lesson_questions
from gemmlab_grader import sandbox
from test_gemmlab_grader_isolate import processes_with

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(sandbox.bwrap() is None, reason="bubblewrap is not installed")]

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = ROOT / "tests" / "hostile"
L01, L02 = "01_numbers_and_precision.ipynb", "02_gemm_from_neurons.ipynb"   # the attacks' names
EX01, EX02 = "01_numbers_and_precision_exercises.ipynb", "02_gemm_from_neurons_exercises.ipynb"
ESCAPED_NAME = "attack_terminal\x1b[31m_escapes\r"
REACHING = ["attack_proc_snooper", "attack_checker_patcher", "attack_detached",
            "attack_solutions_reader", "attack_kill_parent", "attack_folder_deleter",
            "attack_run_folder", "attack_escapee", "attack_shm_filler", "attack_deep_tree",
            "attack_huge_answers", "attack_out_folder"]
MARKERS = ("gemmlab-hostile-detached", "gemmlab-hostile-escapee")
BOM = b"\xef\xbb\xbf"
PACKAGES = ("gemmlab", "gemmlab_grader")
N01, N02 = len(lesson_questions(1)), len(lesson_questions(2))


def _hashes(folder):
    """sha256 of every regular file under ``folder`` (links and FIFOs by what they are)."""
    found = {}
    for path in sorted(Path(folder).rglob("*")):
        if "__pycache__" in path.parts:
            continue
        rel = str(path.relative_to(folder))
        if path.is_symlink():
            found[rel] = "link -> " + os.readlink(path)
        elif path.is_fifo():
            found[rel] = "fifo"
        elif path.is_file():
            found[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def _make_submissions(folder, students):
    for student in students:
        shutil.copytree(HOSTILE / student, folder / student)
    if "attack_terminal_escapes" in students:
        (folder / "attack_terminal_escapes").rename(folder / ESCAPED_NAME)
    for student, source in (("honest01", ROOT / "solutions" / EX01),
                            ("honest02", ROOT / "solutions" / EX02),
                            ("blank", ROOT / "exercises" / EX01)):
        (folder / student).mkdir()
        shutil.copyfile(source, folder / student / source.name)
    (folder / "bom01").mkdir()                  # saved by an editor that writes a byte-order mark
    (folder / "bom01" / EX01).write_bytes(BOM + (ROOT / "solutions" / EX01).read_bytes())


def _make_special_entries(folder):
    (folder / "dir_student" / "01_x.ipynb").mkdir(parents=True)
    (folder / "fifo_student").mkdir()
    os.mkfifo(folder / "fifo_student" / "01_x.ipynb")
    (folder / "link_student").mkdir()
    os.symlink(ROOT / "solutions" / EX01, folder / "link_student" / "01_x.ipynb")
    (folder / "malformed").mkdir()
    (folder / "malformed" / "01_x.ipynb").write_text("{ not json")


@dataclass
class Run:
    sandboxed: bool
    status: int
    stdout: str
    stderr: str
    rows: dict
    info: dict
    before: dict            # submissions' hashes before grading
    after: dict
    package_before: dict    # gemmlab, the grader and solutions/ of the checkout under attack
    package_after: dict
    reports_at_exit: dict
    reports_later: dict
    seconds: float
    tmpdir: Path            # the run's TMPDIR: its run folder, and so its processes' arguments


def _checkout_copy(tmp):
    """The packages, the solutions and pyproject.toml copied to ``tmp/checkout``: the grader under
    attack runs from there (first on PYTHONPATH), so a notebook that patches "the installed
    grader" patches this copy, never the checkout other tests are importing at the same time."""
    checkout = tmp / "checkout"
    for package in PACKAGES:
        shutil.copytree(ROOT / package, checkout / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "solutions", checkout / "solutions")
    shutil.copyfile(ROOT / "pyproject.toml", checkout / "pyproject.toml")
    return checkout


def _installed(checkout):
    return {f"{folder}/{rel}": digest for folder in (*PACKAGES, "solutions")
            for rel, digest in _hashes(checkout / folder).items()}


def _grade(tmp, students, special=False, alias=False, extra=(), path=None):
    checkout = _checkout_copy(tmp)
    subs = tmp / "submissions"
    subs.mkdir()
    _make_submissions(subs, students)
    if special:
        _make_special_entries(subs)
    (tmp / "tmp").mkdir()
    before = _hashes(subs)
    package_before = _installed(checkout)
    grader = ["gemmlab.cli", "grade"] if alias else ["gemmlab_grader"]
    # --timeout also bounds each code answer's process, from its start: 60 s leaves room for a
    # start on a loaded machine
    command = [sys.executable, "-m", *grader, "submissions", "--out", "grades", "--timeout", "60",
               "--notebook-timeout", "300", "--seed", "7", "--memory", "2048", "--jobs", "2"]
    env = dict(os.environ, TMPDIR=str(tmp / "tmp"), GEMMLAB_BACKEND="sim",
               PYTHONPATH=os.pathsep.join(filter(None, [str(checkout),
                                                        os.environ.get("PYTHONPATH")])))
    if path is not None:
        env["PATH"] = path
    start = time.monotonic()
    done = subprocess.run([*command, *extra], cwd=tmp, env=env,
                          capture_output=True, text=True, timeout=3000)
    seconds = time.monotonic() - start
    at_exit = _hashes(tmp / "grades")
    time.sleep(2)                       # a surviving detached process would strike now
    written = tmp / "grades" / "grades.json"
    report = json.loads(written.read_text()) if written.exists() else {"notebooks": []}
    rows = {r["student"]: r for r in report["notebooks"]}
    return Run(not extra and path is None, done.returncode, done.stdout, done.stderr, rows, report, before,
               _hashes(subs), package_before, _installed(checkout), at_exit,
               _hashes(tmp / "grades"), seconds, tmp / "tmp")


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    students = sorted(p.name for p in HOSTILE.iterdir() if p.is_dir())
    return _grade(tmp_path_factory.mktemp("full"), students, special=True)



@pytest.fixture(scope="module", params=["--no-sandbox", "no bwrap", "a broken bwrap"])
def refused(request, tmp_path_factory):
    """The attacks that reach outside their notebook, graded where the sandbox cannot be had."""
    tmp = tmp_path_factory.mktemp("refused")
    bin_ = tmp / "bin"
    bin_.mkdir()
    if request.param == "a broken bwrap":
        (bin_ / "bwrap").write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission "
                                    "denied' >&2\nexit 1\n")
        (bin_ / "bwrap").chmod(0o755)
    extra = ["--no-sandbox", "--no-sandbox"] if request.param == "--no-sandbox" else []
    path = None if extra else f"{bin_}:" + ":".join(
        d for d in os.environ["PATH"].split(":") if not os.path.exists(os.path.join(d, "bwrap")))
    return _grade(tmp, REACHING, alias=True, extra=extra, path=path)


def _passed(row):
    return row["passed"], row["total"]


def test_the_run_finishes_and_writes_its_reports(full):
    assert full.status == 0, full.stderr[-3000:]
    assert "seed" not in full.info and full.info["sandbox"] == full.sandboxed
    print(f"graded {len(full.rows)} submissions in {full.seconds:.0f} s "
          f"({'sandbox' if full.sandboxed else 'no sandbox'})")


def test_a_notebook_with_a_byte_order_mark_is_graded_like_any_other(full):
    assert _passed(full.rows["bom01"]) == (N01, N01), full.rows["bom01"]["notes"]


def test_honest_and_blank_students_are_untouched_by_the_attacks(full):
    assert _passed(full.rows["honest01"]) == (N01, N01), full.rows["honest01"]["feedback"]
    assert not full.rows["honest01"]["notes"]
    assert _passed(full.rows["blank"]) == (0, N01)
    assert set(full.rows["blank"]["results"].values()) == {"not attempted"}
    assert _passed(full.rows["honest02"]) == (N02, N02), full.rows["honest02"]["feedback"]


def test_submissions_and_package_are_unchanged_afterwards(full):
    assert full.after == full.before             # in the sandbox the folder is not even mounted
    assert full.package_after == full.package_before


def test_no_process_and_no_temporary_file_is_left_and_the_reports_stay_as_written(full):
    assert not any(processes_with(marker) for marker in MARKERS)
    # this run's processes name its run folder (gemmlab-grade-* under its TMPDIR); other tests
    # grading at the same time on other workers have their own
    assert not processes_with(str(full.tmpdir))
    assert full.reports_later == full.reports_at_exit
    assert os.listdir(full.tmpdir) == []


def test_every_report_is_written(full):
    for name in ("summary.txt", "grades.html", "grades-lms.csv", "grades.csv", "grades.json"):
        assert name in full.reports_at_exit, name
    assert len(full.stdout.splitlines()[0]) <= 100          # the summary comes first


def test_a_notebook_cannot_forge_verdicts_by_logging_or_printing(full):
    row = full.rows["attack_log_forger"]
    assert row["results"]["01.weights_gib"] == "fail"
    assert _passed(row) == (0, N01)


def test_the_package_in_a_notebook_has_no_references(full):
    assert _passed(full.rows["attack_reference_reader"]) == (0, N01)
    assert set(full.rows["attack_reference_reader"]["results"].values()) == {"not attempted"}


def test_code_runs_without_the_references_and_its_processes_die(full):
    row = full.rows["attack_code_cheater"]
    assert row["results"]["02.naive_matmul"] == "fail"
    feedback = row["feedback"]["02.naive_matmul"]      # the bank's name built at run time:
    assert "imports importlib" in feedback and "grants these imports only" in feedback, feedback
    # its row_major_index starts a detached process: refused on the source now, never started
    assert row["results"]["02.row_major_index"] == "fail"
    assert "imports subprocess" in row["feedback"]["02.row_major_index"]


def test_an_answer_that_escapes_through_match_reaches_nothing(full):
    """Issue 54: these passed when the answer shared the judge's interpreter."""
    stand_in = full.rows["attack_match_stand_in"]
    assert stand_in["results"]["02.naive_matmul"] == "fail"
    assert "'_data' on an array is not allowed" in stand_in["feedback"]["02.naive_matmul"]
    imported = full.rows["attack_match_import"]
    assert imported["results"]["03.amdahl_function"] == "fail"
    assert "No module named 'gemmlab'" in imported["feedback"]["03.amdahl_function"]


WMMA_ATTACKS = {"attack_wmma_operand_data": "A's 'data' is not reachable in this answer",
                "attack_wmma_match_array": "A's '_array' is not reachable in this answer",
                "attack_wmma_fragment_data": "a fragment's 'data' is not reachable in this answer",
                "attack_wmma_gc_walk": "C was never stored"}


def test_the_tensor_core_lab_s_attacks_reach_no_matrix(full):
    """Issue 54: these passed while the answer ran beside the matrices; in the answer runtime
    A, B, C and the fragments are handles and the judge does every fragment call."""
    for student, says in WMMA_ATTACKS.items():
        row = full.rows[student]
        assert row["results"]["12.lab_wmma"] == "fail", (student, row["feedback"])
        assert says in row["feedback"]["12.lab_wmma"], (student, row["feedback"])


RANK_ATTACKS = {"attack_ranks_class_attribute": ("the ring's messages carried zeros",),
                "attack_ranks_builtins": ("the ring's messages carried zeros",),
                "attack_ranks_default_argument": ("the ring's messages carried zeros",),
                "attack_ranks_snooper": ("nothing reached: {'fds': [",),
                "attack_ranks_sibling_killer": ("rank 0 raised PermissionError",)}


def test_the_rank_labs_attacks_share_nothing_between_ranks(full):
    """Issue 54, item 3: each rank is a process of its own, and the judge routes every message."""
    for student, says in RANK_ATTACKS.items():
        row = full.rows[student]
        feedback = row["feedback"]["07.lab_ring"]
        assert row["results"]["07.lab_ring"] == "fail", (student, feedback)
        assert any(s in feedback for s in says), (student, feedback)
    snooped = full.rows["attack_ranks_snooper"]["feedback"]["07.lab_ring"]
    assert re.search(r"'fds': \[\d+, \d+\], 'parent': 'refused'", snooped), snooped  # its own


def test_the_repository_cannot_be_read_from_the_sandbox(full):
    assert _passed(full.rows["attack_solutions_reader"]) == (0, N01)


def test_the_reaching_attacks_are_refused_without_the_sandbox_before_any_runs(refused):
    assert refused.status == 2, refused.stderr
    assert "--trusted" in refused.stderr
    assert "--no-sandbox is gone" in refused.stderr or "refusing to grade" in refused.stderr
    assert not (refused.tmpdir.parent / "grades").exists() and not refused.rows
    assert refused.after == refused.before and refused.package_after == refused.package_before
    assert not any(processes_with(marker) for marker in MARKERS)
    assert not [n for n in os.listdir("/dev/shm") if n.startswith("gemmlab-hostile-shm")]


def test_what_a_notebook_leaves_in_dev_shm_is_gone(full):
    assert not [n for n in os.listdir("/dev/shm") if n.startswith("gemmlab-hostile-shm")]


def test_3000_nested_folders_leave_the_run_whole_and_a_code_answer_cannot_make_them(full):
    """The notebook's own cells make the tree (its lesson 01 is judged as usual); the code
    answer that would make it in the grader's worker is refused before it runs: naive_matmul's
    question grants no import (gemmlab.judging.allow)."""
    rows = {r["notebook"]: r for r in full.info["notebooks"]}
    assert rows[f"attack_deep_tree/{L01}"]["results"]["01.weights_gib"] == "pass"
    row = rows[f"attack_deep_tree/{L02}"]
    assert row["results"]["02.naive_matmul"] == "fail"
    assert "imports os" in row["feedback"]["02.naive_matmul"], row["feedback"]["02.naive_matmul"]


def test_the_sandbox_gives_no_room_past_its_limits(full):
    row = full.rows["attack_disk_filler"]
    assert row["results"]["01.weights_gib"] == "pass", row["notes"]
    assert row["results"]["01.weights_fp32_gib"] == "fail"


def test_a_120_mib_answers_file_is_refused_and_the_grader_stays_small(full):
    row = full.rows["attack_huge_answers"]
    assert row["results"]["01.weights_gib"] == "fail"
    assert "more than 4 MiB" in row["feedback"]["01.weights_gib"], row["feedback"]
    # about 0.3 GB on the simulator, 1.2 GB with a GPU's libraries loaded (an H200 machine)
    assert full.info["grader_peak_rss_mib"] < 2048


def test_killing_the_parent_or_the_kernel_fails_only_that_notebook(full):
    row = full.rows["attack_kill_parent"]
    assert "kill its parent process" in row["notes"][0] and _passed(row) == (0, N01)
    assert all(f.startswith("not graded") for f in row["feedback"].values())
    if "attack_kernel_dies" in full.rows:
        row = full.rows["attack_kernel_dies"]
        assert "the kernel died during cell 2" in row["notes"][0] and _passed(row) == (0, N01)


def test_a_hanging_read_is_interrupted_and_the_notebook_goes_on(full):
    row = full.rows["attack_hanging_read"]
    assert any("ran past 60 s: interrupted" in n for n in row["notes"]), row["notes"]
    assert row["results"]["01.weights_gib"] == "pass"


def test_huge_output_and_memory_are_capped_and_the_notebook_goes_on(full):
    row = full.rows["attack_huge_output"]
    assert any("printed 100 MiB of output (not kept)" in n for n in row["notes"]), row["notes"]
    assert row["results"]["01.weights_gib"] == "pass"
    row = full.rows["attack_memory_hog"]
    assert any("MemoryError" in n for n in row["notes"]) and _passed(row) == (1, N01)


def test_the_questions_come_from_the_bank_not_from_the_notebook(full):
    assert _passed(full.rows["attack_deleted_checks"]) == (1, N01)


def test_objects_equal_to_everything_are_not_numbers(full):
    row = full.rows["attack_equal_to_everything"]
    assert _passed(row) == (0, N01)
    assert "expected a number (in GiB), got Everything 0.0" in row["feedback"]["01.weights_gib"]


def test_the_terminal_table_shows_control_characters_escaped(full):
    table = full.stdout                 # the summary (the lesson tables are in summary.txt)
    assert not any(c in table for c in "\x1b\r\u202e")
    assert "attack_terminal\\x1b[" in table             # the name, escaped and cut
    row = full.rows[ESCAPED_NAME]
    assert row["results"]["01.weights_gib"] == "fail"


@pytest.mark.parametrize("student, reason", [
    ("dir_student", "a folder, not a notebook file"),
    ("fifo_student", "not a regular file (a FIFO, socket or device)"),
    ("link_student", "a symbolic link, not followed"),
    ("malformed", "not a valid notebook"),
])
def test_entries_that_are_not_notebooks_fail_with_the_reason(full, student, reason):
    row = full.rows[student]
    assert reason in row["notes"][0] and _passed(row) == (0, N01)
