"""The ``gemmlab`` command: ``doctor``, ``bench``, ``allreduce``, ``tp``, ``work`` (students'
copies), ``assign`` and ``grade`` (instructors). Each subcommand is a small function taking the
parsed arguments."""
import argparse
import sys
from pathlib import Path


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


def _grade(args):
    from .grading import grade
    return grade.main(args.submissions, out=args.out, timeout=args.timeout,
                      notebook_timeout=args.notebook_timeout, memory_mib=args.memory,
                      use_sandbox=args.sandbox, seed=args.seed, lesson=args.lesson)


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
    from .collectives import launch
    return launch.main(args)


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
                        "rungs); wmma and hopper[:stage=wgmma|tma|ws|persistent] add the "
                        "Tensor Core kernels of lesson 12")
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

    p = sub.add_parser("work", help="copy the exercise notebooks you do not have yet into DIR "
                                    "(work/; never over yours; `make lab` runs it); from an "
                                    "installed course, the lessons too, into DIR/lessons/")
    p.add_argument("dir", nargs="?", help="your folder of exercise notebooks (default: work)")
    p.add_argument("--exercises", help="where the exercises are (default: ./exercises, else the "
                                       "installed course's)")
    p.add_argument("--to", default="work", help=argparse.SUPPRESS)      # the older spelling of DIR
    p.set_defaults(run=_work)

    p = sub.add_parser("grade", help="run a folder of student notebooks in isolation and "
                                     "judge their answers")
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
    p.set_defaults(run=_grade)

    p = sub.add_parser("allreduce", help="time ring, centralized and MPI's all-reduce over MPI "
                                         "processes (--backend nccl: our ring and NCCL's over "
                                         "GPUs), checking every rank's sum")
    from .collectives.launch import add_arguments
    add_arguments(p)
    p.set_defaults(run=_allreduce)

    p = sub.add_parser("tp", help="Megatron's FFN or attention on N processes over MPI (--backend "
                                  "nccl: N GPUs), every rank checked against one process")
    from .parallel.tp import add_arguments as tp_arguments
    tp_arguments(p)
    p.set_defaults(run=_tp)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
