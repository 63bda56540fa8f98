"""The grader's command: ``gemmlab-grade SUBMISSIONS [options]``, also ``python -m
gemmlab_grader`` and ``gemmlab grade`` (which runs this). Bad options are a one-line error with
exit status 2; see :func:`gemmlab_grader.grade.main` for the others."""
import argparse
import sys


def _positive(text):
    """A whole number > 0 (``--timeout 0`` must not switch the limit off)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number greater than 0, got {text!r}")
    return value


def _seed(text):
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value < 2**32:
        raise argparse.ArgumentTypeError(f"expected a whole number from 0 to 2**32-1, got {text!r}")
    return value


def _lesson(text):
    if not (len(text) <= 2 and text.isdigit()):
        raise argparse.ArgumentTypeError(f"expected a lesson number like 07, got {text!r}")
    return f"{int(text):02d}"


def build_parser():
    p = argparse.ArgumentParser(prog="gemmlab grade", description="Run a folder of student "
                                "notebooks in isolation and judge their answers.")
    p.add_argument("submissions", help="a folder of one folder per student (holding NN_*.ipynb "
                                       "notebooks), or of one notebook per student (with --lesson)")
    p.add_argument("--out", default="grades", help="where grades.csv and grades.json go "
                                                   "(outside the submissions)")
    p.add_argument("--lesson", type=_lesson, help="the lesson every notebook answers (default: "
                                                  "the NN_ that starts each file name)")
    p.add_argument("--timeout", type=_positive, default=120,
                   help="seconds allowed per cell, wall clock and CPU (also per code answer)")
    p.add_argument("--notebook-timeout", type=_positive, default=900,
                   help="seconds allowed per notebook, everything included")
    p.add_argument("--memory", type=_positive, default=8192,
                   help="MiB of address space per process of a notebook")
    p.add_argument("--sandbox", action="store_true",
                   help="run each notebook in bubblewrap: read-only file system, no network, "
                        "no view of the repository, the submissions or other processes")
    p.add_argument("--seed", type=_seed, help="seed of the hidden cases (default: random, and "
                                              "written to grades.json)")
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    from .grade import main as grade      # after the options: a usage error stays quick
    return grade(args.submissions, out=args.out, timeout=args.timeout,
                 notebook_timeout=args.notebook_timeout, memory_mib=args.memory,
                 use_sandbox=args.sandbox, seed=args.seed, lesson=args.lesson)


if __name__ == "__main__":
    sys.exit(main())
