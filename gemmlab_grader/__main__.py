"""The grader's command: ``gemmlab-grade SUBMISSIONS [options]`` (also ``python -m
gemmlab_grader`` and ``gemmlab grade``) and ``gemmlab-grade merge`` (:mod:`~gemmlab_grader.merge`).
``gemmlab-grade gradescope`` builds a Gradescope autograder (:mod:`~gemmlab_grader.gradescope`).
Bad options are a one-line error with exit status 2; :func:`gemmlab_grader.grade.main` and the
merge's ``main`` give the others."""
import argparse
import sys


def _option(convert, expected):
    """An option's type: ``convert(text)``, a one-line usage error if that is None or raises
    ValueError."""
    def parse(text):
        try:
            value = convert(text)
        except ValueError:
            value = None
        if value is None:
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
        return value
    return parse


def _parse_shard(text):
    from .submissions import parse_shard        # imported when needed: it imports the bank
    return parse_shard(text)


# --timeout 0 must not switch the limit off
_positive = _option(lambda t: int(t) if int(t) > 0 else None, "a whole number greater than 0")
_seed = _option(lambda t: int(t) if 0 <= int(t) < 2**32 else None,
                "a whole number from 0 to 2**32-1")
_lesson = _option(lambda t: f"{int(t):02d}" if len(t) <= 2 and t.isdigit() else None,
                  "a lesson number like 07")
_shard = _option(_parse_shard, "a shard like 2/8 (the 2nd of 8, counted from 1)")


def build_parser():
    p = argparse.ArgumentParser(
        prog="gemmlab grade", description="Run a folder of student notebooks in isolation and "
        "judge their answers. `gemmlab-grade merge --out DIR SHARD_OUTPUT...` joins the outputs "
        "of --shard runs into one report.")
    p.add_argument("submissions", help="a folder of one folder per student (holding NN_*.ipynb "
                   "notebooks), or of one notebook per student (with --lesson)")
    p.add_argument("--out", default="grades", help="where the reports go (outside the "
                   "submissions): summary.txt, grades.html, grades.csv, grades-lms.csv, "
                   "gradebook-canvas.csv, gradebook-moodle.csv, grades.json, students/")
    p.add_argument("--lesson", type=_lesson, help="the lesson every notebook answers (default: "
                   "the NN_ that starts each file name)")
    p.add_argument("--timeout", type=_positive, default=120,
                   help="seconds allowed per cell, wall clock and CPU (also per code answer)")
    p.add_argument("--notebook-timeout", type=_positive, default=900,
                   help="seconds allowed per notebook, everything included")
    p.add_argument("--memory", type=_positive, default=8192,
                   help="MiB of memory per notebook: address space per process, all its "
                        "processes together (its cgroup, where one can be made), and its two "
                        "writable memory file systems together, in the sandbox")
    p.add_argument("--processes", type=_positive, default=512,
                   help="processes per notebook (its cgroup's pids.max, where one can be made)")
    p.add_argument("--jobs", type=_positive, help="notebooks graded at once (default: the cores)")
    p.add_argument("--shard", type=_shard, metavar="I/N",
                   help="grade only the students of shard I of N (fixed by each student's name, "
                        "counted from 1); join the shards' outputs with `gemmlab-grade merge`")
    p.add_argument("--sandbox", action="store_true",
                   help="run each notebook in bubblewrap (the default; kept for old scripts)")
    p.add_argument("--trusted", action="store_true",
                   help="grade TRUSTED notebooks (the instructor's own solutions) with no sandbox: "
                        "they run as you and nothing is guarded. Never for students' notebooks")
    p.add_argument("--no-sandbox", action="count", default=0, help=argparse.SUPPRESS)
    p.add_argument("--seed", type=_seed, help="the secret each student's hidden cases derive from, "
                   "with the student's folder name (default: random); in no report")
    p.add_argument("--seed-file", metavar="FILE", help="repeat a run exactly: the secret it "
                   "wrote beside its reports (OUT/PRIVATE-run-secret-do-not-share.txt)")
    p.add_argument("--points", metavar="FILE", help="the points of questions or lessons, JSON "
                   "or TOML: {\"07.lab_ring\": 10, \"03\": 1} (default: a lab 5, other code 3, "
                   "a value 2, a choice 1)")
    p.add_argument("--roster", metavar="FILE", help="CSV: student (the folder name), id, "
                   "email, name, section, sis_user_id, sis_login_id: who each student is in the "
                   "LMS, for the gradebooks")
    return p


def _gradescope(argv):
    """``gemmlab-grade gradescope --out autograder.zip``: the Gradescope autograder."""
    p = argparse.ArgumentParser(prog="gemmlab-grade gradescope", description="Build a Gradescope "
                                "autograder zip that grades each submission with this grader, "
                                "in its sandbox (see gemmlab_grader/gradescope.py).")
    p.add_argument("--out", default="autograder.zip", help="the zip to write")
    p.add_argument("--lesson", type=_lesson, help="the lesson every submitted notebook answers "
                   "(default: the NN_ that starts each file name)")
    p.add_argument("--points", metavar="FILE", help="the points of questions or lessons (JSON "
                   "or TOML), as for grading")
    args = p.parse_args(argv)
    from gemmlab.grading.bank import questions

    from . import gradescope, points
    try:
        overrides = points.read(args.points, questions()) if args.points else None
    except ValueError as exc:
        p.error(str(exc))
    print(f"wrote {gradescope.build(args.out, args.lesson, overrides)}: upload it as the "
          f"assignment's autograder (Configure Autograder, Zip file upload). It holds the run's "
          f"secret and solutions/: keep it from students.")
    return 0


def main(argv=None):
    from gemmlab.platforms import needs_linux
    needs_linux("The grader (gemmlab grade)", "its sandbox is bubblewrap, its limits Linux's")
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["merge"]:
        p = argparse.ArgumentParser(prog="gemmlab-grade merge", description="Join the outputs "
                                    "of a class graded in shards (--shard i/n) into one report.")
        p.add_argument("shards", nargs="+", help="the --out folders of the shards")
        p.add_argument("--out", required=True, help="where the joined reports go")
        args = p.parse_args(argv[1:])
        from .merge import main as merge
        return merge(args.shards, args.out)
    if argv[:1] == ["gradescope"]:
        return _gradescope(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.no_sandbox:
        parser.error("--no-sandbox is gone: untrusted notebooks are graded only in the sandbox. "
                     "To grade your own trusted notebooks (solutions/) without it, give "
                     "--trusted: nothing is guarded then")
    if args.sandbox and args.trusted:
        parser.error("--sandbox and --trusted contradict each other")
    if args.seed is not None and args.seed_file:
        parser.error("--seed and --seed-file contradict each other: give one")
    if args.trusted:
        print("WARNING: --trusted: the notebooks run as you with no sandbox and nothing guarded; "
              "grade only notebooks you trust (your own solutions)", file=sys.stderr)
    from .grade import main as grade      # after the options: a usage error stays quick
    return grade(args.submissions, out=args.out, timeout=args.timeout,
                 notebook_timeout=args.notebook_timeout, memory_mib=args.memory,
                 use_sandbox=not args.trusted, seed=args.seed, lesson=args.lesson,
                 jobs=args.jobs, shard=args.shard, points_file=args.points,
                 roster_file=args.roster, seed_file=args.seed_file, processes=args.processes)


if __name__ == "__main__":
    sys.exit(main())
