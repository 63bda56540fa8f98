"""The ``gemmlab`` command: ``doctor``, ``assign``, ``grade`` (and, as lessons add them, ``bench``
and ``allreduce``). Each subcommand is a small function taking the parsed arguments."""
import argparse
import sys


def _doctor(args):
    from . import device
    info = device.info()
    width = max(map(len, info))
    for key, value in info.items():
        print(f"{key:<{width}}  {value if value is not None else '-'}")
    print("\nproblem sizes for this backend:")
    for key, value in device.sizes().items():
        print(f"  {key:<{width}}  {value}")
    return 0


def _assign(args):
    from .grading import assign
    return assign.main(args.solutions, args.exercises, check_only=args.check)


def _grade(args):
    from .grading import grade
    return grade.main(args.submissions, out=args.out, timeout=args.timeout)


def build_parser():
    parser = argparse.ArgumentParser(prog="gemmlab", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("doctor", help="backend, GPU, package versions and the lesson sizes")
    p.set_defaults(run=_doctor)

    p = sub.add_parser("assign", help="regenerate exercises/ from solutions/")
    p.add_argument("--solutions", default="solutions")
    p.add_argument("--exercises", default="exercises")
    p.add_argument("--check", action="store_true",
                   help="change nothing; exit 1 if exercises/ is not what solutions/ generates")
    p.set_defaults(run=_assign)

    p = sub.add_parser("grade", help="run and grade a folder of student notebooks")
    p.add_argument("submissions", help="a folder of .ipynb files, or of one folder per student")
    p.add_argument("--out", default="grades", help="where grades.csv and grades.json go")
    p.add_argument("--timeout", type=int, default=120, help="seconds allowed per cell")
    p.set_defaults(run=_grade)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
