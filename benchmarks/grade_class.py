"""How long grading a class takes: N students x the 16 lessons (each notebook a copy of
solutions/, so every one runs all its code and is judged on every question), graded by the
grader's command at each --jobs given, then checked: every notebook must be at full marks.

In the sandbox when bubblewrap works here (one grader, --jobs J). Where it does not, 4 J shards
(--shard i/4J) are graded `--no-sandbox`, J graders at a time, and `gemmlab-grade merge` joins
them: the same parallelism, and the way a class is spread over machines.

Writes a JSON record: the machine (CPU, cores, load average before and after), versions, date,
and per run: jobs, mode, notebooks, wall seconds, seconds per notebook (wall / notebooks), the
machine's CPU seconds in that time (/proc/stat: per notebook, and how busy the cores were) and
the extrapolation to 100 students x 16 lessons at that throughput (1600 notebooks x seconds per
notebook: it assumes a class that many times larger keeps the same per-notebook throughput, which
a longer run only improves, the last wave's idle cores weighing less).

    python benchmarks/grade_class.py --students 3 --jobs 2 --out benchmarks/grade_class_2core.json
    python benchmarks/grade_class.py --students 3 16 --jobs 16 --out grade_class_16core.json
    python benchmarks/grade_class.py --mixed --jobs 2 --out benchmarks/grade_class_2core_mixed.json

``--mixed`` grades the four students of the issue's trial instead, x 16 lessons: one honest
(copies of solutions/), one partly wrong (every second value answer of each lesson overwritten by
a last cell with 0; its code answers stay right), one empty (copies of exercises/, as handed out)
and one whose notebooks raise halfway (a cell raising RuntimeError inserted in the middle of each
solution). Only the honest student must be at full marks.

(Each --students count is a class of its own, graded at each --jobs: 3 students is the issue's
yardstick; 16 students keep 16 cores busy past the first waves, a better base for the
extrapolation.)
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import nbformat
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gemmlab import measure  # noqa: E402  (after the repository is on the path)
from gemmlab.grading.bank import get_question, lesson_questions  # noqa: E402
from gemmlab_grader import sandbox  # noqa: E402
from gemmlab_grader.submissions import shard_of  # noqa: E402

CLASS = 100 * 16
SHARDS_PER_JOB = 4


def make_class(folder, students):
    """``students`` folders, each holding every lesson's solution notebook."""
    lessons = sorted((ROOT / "solutions").glob("[0-9][0-9]_*.ipynb"))
    for i in range(students):
        (folder / f"student{i:03d}").mkdir(parents=True)
        for path in lessons:
            shutil.copyfile(path, folder / f"student{i:03d}" / path.name)
    return students * len(lessons)


def partly_wrong(nb, lesson):
    """``nb`` with a last cell setting every second value answer of ``lesson`` to 0."""
    wrong = [get_question(q).answer_name for q in lesson_questions(lesson)
             if not get_question(q).is_code][::2]
    nb.cells.append(nbformat.v4.new_code_cell("\n".join(f"{name} = 0" for name in wrong)))
    return nb


def raising(nb, lesson):
    """``nb`` with a cell raising RuntimeError in the middle of its cells."""
    nb.cells.insert(len(nb.cells) // 2, nbformat.v4.new_code_cell(
        "raise RuntimeError('a student cell that raises halfway')"))
    return nb


def make_mixed_class(folder):
    """The four students of ``--mixed`` (the module's docstring), each with the 16 lessons."""
    students = {"honest": ("solutions", None), "partly_wrong": ("solutions", partly_wrong),
                "empty": ("exercises", None), "raising": ("solutions", raising)}
    count = 0
    for student, (source, change) in students.items():
        (folder / student).mkdir(parents=True)
        for path in sorted((ROOT / source).glob("[0-9][0-9]_*.ipynb")):
            nb = nbformat.read(path, as_version=4)
            nbformat.write(change(nb, path.name[:2]) if change else nb, folder / student / path.name)
            count += 1
    return count


def _grader(*args):
    return [sys.executable, "-m", "gemmlab_grader", *map(str, args)]


def grade(subs, out, jobs, timeout):
    """Grade ``subs`` into ``out`` with ``jobs`` notebooks at a time; (mode, wall seconds)."""
    common = ["--seed", "1", "--timeout", str(timeout), "--notebook-timeout", str(4 * timeout)]
    env = dict(os.environ, GEMMLAB_BACKEND="sim")
    start = time.monotonic()
    if sandbox.bwrap() is not None:
        subprocess.run(_grader(subs, "--out", out, "--jobs", jobs, *common), env=env, check=True,
                       stdout=subprocess.DEVNULL)
        return "sandbox, one grader", time.monotonic() - start
    # Shards are chosen by a hash of the name, so they are uneven (16 names over 16 shards fall up
    # to 3 to one): split into SHARDS_PER_JOB times more shards than jobs and keep ``jobs`` graders
    # running, each taking the next shard when it ends (what a scheduler with more tasks than
    # slots does), the largest shards first, so that no core waits for the busiest shard.
    unsafe = ["--trusted"]          # copies of solutions/: trusted notebooks
    n = jobs * SHARDS_PER_JOB
    sizes = Counter(shard_of(student.name, n) for student in subs.iterdir())
    largest_first = sorted(range(1, n + 1), key=lambda i: -sizes[i])

    def one_shard(i):
        return subprocess.run(_grader(subs, "--out", f"{out}-{i}", "--shard", f"{i}/{n}", *unsafe,
                                      *common), env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL).returncode

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        codes = list(pool.map(one_shard, largest_first))
    subprocess.run(_grader("merge", *[f"{out}-{i}" for i in range(1, n + 1)], "--out", out),
                   env=env, check=True, stdout=subprocess.DEVNULL)
    if any(codes):
        statuses = dict(zip(largest_first, codes, strict=True))
        raise SystemExit(f"a shard failed: exit statuses {statuses}")
    return (f"no sandbox (bubblewrap does not work here): {n} shards, {jobs} graders at a time",
            time.monotonic() - start)


def cpu_seconds():
    """(busy, idle) CPU seconds of the whole machine so far, from /proc/stat: busy is user, nice,
    system, irq and softirq (steal, the hypervisor's, is neither); None where there is none."""
    try:
        fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return None
    hz = os.sysconf("SC_CLK_TCK")
    return (sum(fields[i] for i in (0, 1, 2, 5, 6)) / hz, sum(fields[3:5]) / hz)


def measure_run(subs, out, students, notebooks, jobs, timeout, mixed=False):
    """Grade the class in ``subs`` with ``jobs`` at a time: its record, printed in one line."""
    before = cpu_seconds()
    mode, wall = grade(subs, out, jobs, timeout)
    after = cpu_seconds()
    report = json.loads((out / "grades.json").read_text())
    short = [f"{r['notebook']}: {r['passed']}/{r['total']} {r['notes'][:1]}"
             for r in report["notebooks"] if (r["passed"] != r["total"] or r["notes"])
             and (not mixed or r["student"] == "honest")]
    per = wall / notebooks
    busy = after[0] - before[0] if before and after else None
    cores = len(os.sched_getaffinity(0))
    print(f"{students} students, jobs {jobs} ({mode}): {notebooks} notebooks in {wall:.0f} s = "
          f"{per:.2f} s per notebook; 100 students x 16 lessons: {CLASS * per / 60:.0f} min"
          + (f"; CPU {busy / notebooks:.2f} s per notebook, the cores {busy / (cores * wall):.0%} "
             f"busy" if busy else "") + (f"; NOT at full marks: {short[:3]}" if short else ""))
    return {"jobs": jobs, "mode": mode, "students": students, "notebooks": notebooks,
            "wall_seconds": round(wall, 1), "seconds_per_notebook": round(per, 2),
            "notebook_seconds_mean": round(sum(r["seconds"] for r in report["notebooks"])
                                           / notebooks, 2),
            "extrapolated_class_minutes": round(CLASS * per / 60, 1),
            "machine_cpu_seconds": None if busy is None else round(busy, 1),
            "cpu_seconds_per_notebook": None if busy is None else round(busy / notebooks, 2),
            "cores_busy": None if busy is None else round(busy / (cores * wall), 3),
            "not_at_full_marks": short,
            "points_by_student": _points_by_student(report) if mixed else None}


def _points_by_student(report):
    """{student: [points, possible]} over their notebooks (what the mixed class came to)."""
    totals = {}
    for r in report["notebooks"]:
        got = totals.setdefault(r["student"], [0, 0])
        got[0], got[1] = round(got[0] + r["score"], 2), got[1] + r["possible"]
    return totals


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--students", type=int, nargs="+", default=[3])
    p.add_argument("--jobs", type=int, nargs="+", default=[os.cpu_count()])
    p.add_argument("--timeout", type=int, default=300, help="--timeout per cell (a limit only)")
    p.add_argument("--mixed", action="store_true",
                   help="grade the four students honest, partly wrong, empty, raising instead")
    p.add_argument("--out", required=True, help="the JSON record to write")
    args = p.parse_args()
    load_before = os.getloadavg()
    runs = []
    with tempfile.TemporaryDirectory(prefix="gemmlab-grade-bench-") as tmp:
        for students in [] if args.mixed else args.students:
            subs = Path(tmp) / f"class-{students}"
            notebooks = make_class(subs, students)
            for jobs in args.jobs:
                runs.append(measure_run(subs, Path(tmp) / f"grades-{students}-{jobs}", students,
                                        notebooks, jobs, args.timeout))
        if args.mixed:
            subs = Path(tmp) / "class-mixed"
            notebooks = make_mixed_class(subs)
            for jobs in args.jobs:
                runs.append(measure_run(subs, Path(tmp) / f"grades-mixed-{jobs}", 4, notebooks,
                                        jobs, args.timeout, mixed=True))
    record = {"machine": measure.machine(gpu=None, load_before=load_before,
                                         load_after=os.getloadavg(),
                                         usable_cores=len(os.sched_getaffinity(0))),
              "runs": runs}
    Path(args.out).write_text(json.dumps(record, indent=2) + "\n")
    if any(r["not_at_full_marks"] for r in runs):
        raise SystemExit("some notebooks were not at full marks: see the record")


if __name__ == "__main__":
    main()
