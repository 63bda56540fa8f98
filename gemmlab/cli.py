"""The ``gemmlab`` command: ``doctor``, ``assign``, ``grade`` (and, as lessons add them, ``bench``,
``allreduce`` and ``tp``). Each subcommand is a small function taking the parsed arguments."""
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
    parser = argparse.ArgumentParser(prog="gemmlab", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("doctor", help="backend, GPU, package versions and the lesson sizes")
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
