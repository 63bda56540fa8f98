"""The ``gemmlab`` command: ``doctor``, ``bench``, ``allreduce``, ``tp``, ``work`` (students'
copies), ``assign`` and ``grade`` (instructors). Each subcommand is a small function taking the
parsed arguments.

``gemmlab grade ...`` is the grader's command: the grader is a package of its own, which imports
gemmlab and is never imported by it, so ``gemmlab grade`` becomes ``python -m gemmlab_grader``
with the same arguments (``gemmlab-grade`` is the same command).
"""
import argparse
import os
import sys
from pathlib import Path

GRADER = "gemmlab_grader"           # run as a command, never imported


def _doctor(args):
    from . import doctor
    return doctor.main()


def _assign(args):
    from .grading import assign, handout
    if args.release:
        return handout.release_main(args.release, root=Path(args.solutions).resolve().parent)
    return assign.main(args.solutions, args.exercises, check_only=args.check, force=args.force)


def _work(args):
    from .grading import handout
    return handout.work_main(args.exercises, args.dir or args.to)


def _progress(args):
    import json
    from .grading import progress
    try:
        found = progress.verdicts(args.dir, args.lessons)       # judged here (trusted: yours)
    except ValueError as exc:
        print(f"gemmlab progress: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(found))
        return 0
    rows = progress.tally(found, progress.revealed_in(args.dir))
    print(progress.table(rows))
    if args.picture:
        progress.figure(rows).savefig(args.picture)
        print(f"picture: {args.picture}")
    return 0


def _sizes(text):
    """'1024,2048' or '1024' -> [1024, 2048] / [1024] (``--sizes`` takes both forms)."""
    try:
        return [int(n) for n in text.split(",") if n]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected whole numbers like 1024,2048, got {text!r}")


def _bench(args):
    if args.sizes:
        args.sizes = [n for group in args.sizes for n in group]
    if args.cpu:
        from .kernels import cpubench
        return cpubench.main(args)
    from . import bench
    try:
        for spec in args.kernels or ():
            bench.parse_kernel(spec)                # a bad spec is the user's input: one line
    except ValueError as exc:
        print(f"gemmlab bench: {exc}", file=sys.stderr)
        return 2
    return bench.main(args)


def _allreduce(args):
    from .collectives import allreduce_command
    return allreduce_command.main(args)


def _tp(args):
    from .parallel import tp
    return tp.main(args)


def build_parser():
    from . import __version__
    parser = argparse.ArgumentParser(prog="gemmlab", description=__doc__.split("\n")[0])
    parser.add_argument("--version", action="version", version=f"gemmlab {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("doctor", help="backend and why, GPU, CUDA driver vs CuPy, compilers, MPI, "
                                      "tools, package versions and the lesson sizes")
    p.set_defaults(run=_doctor)

    p = sub.add_parser("bench", help="time GEMM kernels (--cpu: the single-thread CPU baselines)")
    p.add_argument("--cpu", action="store_true",
                   help="time the five CPU GEMMs beside NumPy instead of the GPU kernels")
    p.add_argument("--sizes", type=_sizes, nargs="+",
                   help="square matrix sizes n to time, e.g. 1024,2048,4096 (default: per backend)")
    p.add_argument("--out", help="also write the results and the machine description to this JSON file")
    p.add_argument("--kernels", nargs="+", metavar="SPEC",
                   help="GPU rungs to time, each NAME or NAME:KEY=INT,KEY=INT (default: all "
                        "rungs); wmma and hopper[:stage=auto|wgmma|tma|ws|persistent|pingpong] add "
                        "the Tensor Core kernels of lesson 12")
    p.add_argument("--shapes", nargs="+", metavar="MxNxK", help="non-square shapes to time too")
    p.add_argument("--repeats", type=int, help="timed runs per kernel (default 20 on a GPU)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(run=_bench)

    p = sub.add_parser("assign", help="instructors: regenerate exercises/ from solutions/ "
                                      "(never over a notebook changed since), or --release")
    p.add_argument("--solutions", default="solutions")
    p.add_argument("--exercises", default="exercises")
    p.add_argument("--check", action="store_true",
                   help="change nothing; exit 1 if exercises/ is not what solutions/ generates")
    p.add_argument("--force", action="store_true",
                   help="also replace exercise notebooks changed since assign wrote them")
    p.add_argument("--release", metavar="DIR",
                   help="write a student copy of the course (no solutions/) into the new DIR")
    p.set_defaults(run=_assign)

    p = sub.add_parser("work", help="make your student folder DIR (work/): the lessons in "
                                    "DIR/notebooks/, the exercises in DIR/exercises/, never over "
                                    "yours (`make lab` runs it)")
    p.add_argument("dir", nargs="?", help="your folder of exercise notebooks (default: work)")
    p.add_argument("--exercises", help="where the exercises are (default: ./exercises, else the "
                                       "installed course's)")
    p.add_argument("--to", default="work", help=argparse.SUPPRESS)      # the older spelling of DIR
    p.set_defaults(run=_work)

    p = sub.add_parser("progress", help="your progress: each lesson's questions passed, failed, "
                                         "not attempted and revealed, judged from your own "
                                         "notebooks, on this machine")
    p.add_argument("dir", nargs="?", default="work", help="your student folder (default: work)")
    p.add_argument("--lesson", dest="lessons", action="append", default=[],
                   help="only this lesson (two digits; may be given again)")
    p.add_argument("--picture", metavar="PNG", help="also draw a bar per lesson into this file")
    p.add_argument("--json", action="store_true", help="the verdicts as JSON {lesson: {id: status}}")
    p.set_defaults(run=_progress)

    # only listed here: main() hands `gemmlab grade ...` to the grader's own command
    sub.add_parser("grade", add_help=False, help="run a folder of student notebooks in isolation "
                   "and judge their answers (the grader: `gemmlab grade --help`)")

    p = sub.add_parser("allreduce", help="time ring, centralized and MPI's all-reduce over MPI "
                                         "processes (--backend nccl: our ring and NCCL's over "
                                         "GPUs), checking every rank's sum")
    from .collectives.allreduce_command import add_arguments
    add_arguments(p)
    p.set_defaults(run=_allreduce)

    p = sub.add_parser("tp", help="Megatron's FFN or attention on N processes over MPI (--backend "
                                  "nccl: N GPUs), every rank checked against one process")
    from .parallel.tp import add_arguments as tp_arguments
    tp_arguments(p)
    p.set_defaults(run=_tp)
    return parser


def grade(arguments):
    """``gemmlab grade ARGUMENTS``: this process becomes the grader's command (exec), so the
    grader has its process id, signals (Ctrl-C reaches it alone, and it cleans up), streams and
    exit status. Never returns."""
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, [sys.executable, "-m", GRADER, *arguments])


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["grade"]:
        return grade(argv[1:])
    args = build_parser().parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
