"""What a student does on a laptop without an NVIDIA GPU, run in the environment at hand: every
lab's and puzzle's check() on its worked answer (solutions/), then lessons 00 and 03 run
top to bottom as the course's tools run them. tests/test_constraints.py runs it in a venv built
from the set that resolves for macOS (constraints/macos-arm64.txt).

Prints each check's verdict as check() does ("[PASS] 05.lab_tiled: ...") and a line per lesson;
exits 1 if any check does not pass or any lesson fails (naming it).
"""
import sys
from pathlib import Path

import gemmlab as gl
from gemmlab.grading import check
from gemmlab.grading.bank import questions
from gemmlab.labs.solutions import solution
from gemmlab.notebook_run import NotebookFailure, execute

ROOT = Path(__file__).resolve().parents[1]
LESSONS = ("00_start_here.ipynb", "03_parallel_work_and_speedup.ipynb")


def is_lab(question_id):
    """A lab (student code judged: kernels on the simulator, programs on simulated ranks) or a
    lesson 03 puzzle."""
    return ".lab_" in question_id or ".puzzle_" in question_id


def main():
    print(f"backend {gl.device.backend()}, numba-cuda {gl.device.versions().get('numba-cuda')}")
    failed = []
    for qid, question in questions().items():
        if not is_lab(qid):
            continue
        result = check(qid, solution(qid, name=question.answer_name))     # prints its verdict
        if result.status != "pass":
            failed.append(qid)
    for name in LESSONS:
        try:
            execute(ROOT / "notebooks" / name)
            print(f"RAN notebooks/{name}", flush=True)
        except NotebookFailure as failure:
            print(f"FAILED notebooks/{name}: {failure}", flush=True)
            failed.append(name)
    if failed:
        print(f"not passed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
