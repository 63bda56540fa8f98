"""``gemmlab allreduce``: start N MPI processes, time the all-reduce algorithms, check the results.

:func:`run_allreduce` launches ``mpiexec -n N python -m mpi4py -m gemmlab.collectives.worker``
(``python -m mpi4py`` aborts the whole job when one rank raises, instead of leaving the others
waiting forever) with ``MPIEXEC_TIMEOUT`` set, so a hang ends in an error, and returns one record
per (algorithm, size) with the median time, nccl-tests' algbw and busbw, and whether every rank
got the exact sum.
"""
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

from .cost import algbw, busbw

MPI_ALGORITHMS = ("ring", "centralized", "mpi")
BACKENDS = ("mpi", "nccl")            # --backend nccl: one process per GPU, see collectives.nccl
SWEEPS = {"mpi": [1 << k for k in range(13, 27)],      # --sweep: 8 KiB .. 64 MiB on CPU cores,
          "nccl": [1 << k for k in range(13, 31)]}     # 8 KiB .. 1 GiB on GPUs (nccl-tests' range)
RESULT_TAG = "GEMMLAB_ALLREDUCE"      # rank 0 of the worker prefixes each JSON result line with it
DTYPES = ("float32", "float64", "int32", "int64")
_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9,
          "kib": 2**10, "mib": 2**20, "gib": 2**30}


def parse_size(text):
    """Bytes in a size such as "64MiB", "1 KiB", "4MB" or "4096"."""
    if isinstance(text, (int, np.integer)) and not isinstance(text, bool):
        return int(text)
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", str(text))
    if not match or match.group(2).lower() not in _UNITS:
        raise ValueError(f"size {text!r}: expected a number of bytes with an optional unit "
                         f"(B, KiB, MiB, GiB, KB, MB, GB), e.g. 64MiB")
    return int(float(match.group(1)) * _UNITS[match.group(2).lower()])


def format_size(nbytes):
    """A byte count with a binary unit: 1536 -> "1.5 KiB"."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= scale:
            return f"{nbytes / scale:g} {unit}"
    return f"{nbytes:g} B"


def mpiexec_path():
    """The mpiexec next to this Python (where the ``mpich`` wheel puts it), else the one on PATH."""
    local = Path(sys.executable).parent / "mpiexec"
    if local.exists():
        return str(local)
    found = shutil.which("mpiexec")
    if found is None:
        raise RuntimeError("no mpiexec found next to this Python or on PATH; install an MPI, "
                           "e.g. `pip install mpich mpi4py`")
    return found


def check_request(sizes, algos, dtype, known=MPI_ALGORITHMS):
    """Raise ValueError unless ``algos`` are some of ``known`` and every size holds whole items."""
    unknown = [a for a in algos if a not in known]
    if unknown or not algos:
        raise ValueError(f"algorithms {list(algos)}: expected some of {', '.join(known)}")
    if dtype not in DTYPES:
        raise ValueError(f"dtype {dtype!r}: expected one of {', '.join(DTYPES)}")
    itemsize = np.dtype(dtype).itemsize
    for size in sizes:
        if size <= 0 or size % itemsize:
            raise ValueError(f"size {size} bytes: expected a positive multiple of {itemsize} "
                             f"(the size of one {dtype})")


WORLD_SIZE_VAR = "GEMMLAB_MPI_RANKS"     # how many ranks mpirun asked for, read by the workers


def world():
    """A worker's ``MPI.COMM_WORLD``, checked against the rank count ``mpirun`` asked for.

    When mpiexec and mpi4py come from different MPI libraries, each process starts alone, as rank
    0 of a world of 1, and every rank would compute the whole job by itself: stop instead.
    """
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    wanted = int(os.environ.get(WORLD_SIZE_VAR, comm.Get_size()))
    if comm.Get_size() != wanted:
        sys.exit(f"mpiexec started {wanted} processes, but each one sees an MPI world of "
                 f"{comm.Get_size()}: mpiexec ({mpiexec_path()}) and mpi4py "
                 f"({MPI.Get_library_version().splitlines()[0]}) use different MPI libraries. "
                 f"Install mpi4py and mpich into the same environment (pip install mpi4py mpich), "
                 f"or put the matching library first on LD_LIBRARY_PATH.")
    return comm


def mpirun(n_ranks, program, timeout=300, env=None):
    """Run ``mpiexec -n n_ranks python -m mpi4py <program...>`` and return the finished process.

    ``program`` is what follows ``python -m mpi4py``: a script path or ``["-m", module, ...]``.
    ``MPIEXEC_TIMEOUT`` makes mpiexec kill a job that outlives ``timeout`` seconds (a deadlock
    ends in an error rather than a wait forever). ``env``: variables added to every process's
    environment. Raises RuntimeError if the job fails.
    """
    if isinstance(n_ranks, bool) or not isinstance(n_ranks, (int, np.integer)) or n_ranks < 1:
        raise ValueError(f"n_ranks={n_ranks!r}: expected a whole number of processes >= 1")
    command = [mpiexec_path(), "-n", str(int(n_ranks)), sys.executable, "-m", "mpi4py",
               *map(str, program)]
    env = dict(os.environ, **(env or {}), MPIEXEC_TIMEOUT=str(int(timeout)),
               **{WORLD_SIZE_VAR: str(int(n_ranks))})
    try:
        done = subprocess.run(command, capture_output=True, text=True, env=env,
                              timeout=timeout + 30)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"mpiexec did not finish within {timeout + 30} s: "
                           f"{' '.join(command)}") from None
    if done.returncode != 0:
        raise RuntimeError(f"mpiexec exited with status {done.returncode} (a timeout after "
                           f"{timeout} s, or a rank failed).\ncommand: {' '.join(command)}\n"
                           f"{done.stderr[-3000:]}{done.stdout[-1000:]}")
    return done


def run_allreduce(n_ranks, sizes, algos=MPI_ALGORITHMS, dtype="float32", repeats=5, warmup=1,
                  timeout=300):
    """Time the MPI all-reduce algorithms on ``n_ranks`` processes, one mpiexec job for all sizes.

    Returns a list of dicts: algorithm, n_ranks, size_bytes, dtype, seconds (median over
    ``repeats``), times, verified, algbw and busbw (GB/s, nccl-tests' convention). Raises
    RuntimeError if the job fails or outlives ``timeout`` seconds.
    """
    sizes = [parse_size(s) for s in sizes]
    algos = list(algos)
    check_request(sizes, algos, dtype)
    done = mpirun(n_ranks, ["-m", "gemmlab.collectives.worker", "--algos", ",".join(algos),
                            "--sizes", ",".join(map(str, sizes)), "--dtype", dtype,
                            "--repeats", repeats, "--warmup", warmup], timeout=timeout)
    return parse_records(done.stdout, len(algos) * len(sizes))


def parse_records(stdout, expected):
    """The ``RESULT_TAG`` lines of a job's output as records with algbw and busbw added; a
    RuntimeError unless there are ``expected`` of them."""
    records = [_record(line) for line in stdout.splitlines() if line.startswith(RESULT_TAG)]
    if len(records) != expected:
        raise RuntimeError(f"expected {expected} results from the MPI job, got "
                           f"{len(records)}.\nstdout:\n{stdout[-3000:]}")
    return records


def _record(line):
    record = json.loads(line.split(" ", 1)[1])
    n, size, seconds = record["n_ranks"], record["size_bytes"], record["seconds"]
    record["algbw"] = algbw(size, seconds)
    record["busbw"] = busbw("allreduce", n, size, seconds)
    return record


def format_table(records):
    """The records as an aligned text table, one line per (algorithm, size)."""
    lines = [f"{'algorithm':<12}{'ranks':>6}{'size':>12}{'time (ms)':>12}{'algbw GB/s':>12}"
             f"{'busbw GB/s':>12}  result"]
    for r in records:
        lines.append(f"{r['algorithm']:<12}{r['n_ranks']:>6}{format_size(r['size_bytes']):>12}"
                     f"{r['seconds'] * 1e3:>12.3f}{r['algbw']:>12.3f}{r['busbw']:>12.3f}  "
                     f"{'exact sum on every rank' if r['verified'] else 'WRONG'}")
    return "\n".join(lines)


def add_arguments(parser):
    """The options of ``gemmlab allreduce``."""
    parser.add_argument("--backend", choices=BACKENDS, default="mpi",
                        help="mpi: processes on CPU cores; nccl: one process per GPU, our ring "
                             "over NCCL send/recv against NCCL's own allReduce")
    parser.add_argument("--np", type=int, default=4, dest="n_ranks", help="number of processes")
    parser.add_argument("--size", default=None,
                        help="bytes per rank, e.g. 64MiB (the default); a comma-separated list "
                             "for a sweep")
    parser.add_argument("--sweep", action="store_true",
                        help="sizes in powers of two from 8 KiB to 64 MiB (mpi) or 1 GiB (nccl)")
    parser.add_argument("--algo", default=None,
                        help="comma-separated algorithms; mpi: ring, centralized, mpi (MPI's own "
                             "Allreduce); nccl: ring, nccl (NCCL's own allReduce); default: all")
    parser.add_argument("--iters", type=int, default=20,
                        help="nccl: back-to-back calls per timed sample, as in nccl-tests")
    parser.add_argument("--dtype", default="float32", choices=DTYPES)
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per size (median)")
    parser.add_argument("--timeout", type=int, default=300, help="seconds before the job is killed")
    parser.add_argument("--fit", action="store_true",
                        help="fit alpha and beta per algorithm over the sizes (needs >= 2 sizes)")
    parser.add_argument("--json", help="also write the records to this JSON file")


def requested_sizes(args):
    """The sizes ``--size`` or ``--sweep`` ask for (not both), as strings or byte counts."""
    if args.sweep and args.size is not None:
        raise ValueError(f"--size {args.size} and --sweep both given: --sweep runs its own sizes "
                         f"(8 KiB to {format_size(SWEEPS[args.backend][-1])}); give one of them")
    return SWEEPS[args.backend] if args.sweep else (args.size or "64MiB").split(",")


RANK_BASE_BYTES = 64 << 20    # one MPI rank of the worker: Python, NumPy, mpi4py (measured ~54 MiB)
RANK_BUFFERS = 6              # its peak beside that, in message sizes (measured 5.0-5.5x, 2 ranks)


def available_memory():
    """Bytes of memory available to new processes (MemAvailable), or None if unknown."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def check_arguments(args, sizes):
    """Raise ValueError, with the fix, for counts below 1, unreadable sizes, or an MPI job whose
    ranks would not fit in memory together (estimated from the largest size)."""
    for flag, value in (("--np", args.n_ranks), ("--repeats", args.repeats),
                        ("--iters", args.iters), ("--timeout", args.timeout)):
        if value < 1:
            raise ValueError(f"{flag} {value}: expected a whole number of at least 1")
    largest = max(parse_size(s) for s in sizes)
    if largest <= 0:
        raise ValueError(f"--size {format_size(largest)}: expected a positive size, e.g. 64MiB")
    if args.backend != "mpi":
        return
    need, have = args.n_ranks * (RANK_BUFFERS * largest + RANK_BASE_BYTES), available_memory()
    if have is not None and need > have:
        raise ValueError(
            f"{args.n_ranks} ranks of {format_size(largest)} need about {format_size(need)} of "
            f"memory ({RANK_BUFFERS} x {format_size(largest)} + {format_size(RANK_BASE_BYTES)} "
            f"each), but {format_size(have)} is available: use fewer ranks (--np) or a smaller "
            f"--size")


def main(args):
    """Run ``gemmlab allreduce`` with parsed arguments; exit status 1 if a result is wrong, 2 if
    the request cannot run (bad numbers, not enough memory, for NCCL no CuPy or fewer GPUs
    than --np), with a one-line reason."""
    sizes = requested_sizes(args)
    check_arguments(args, sizes)
    if args.backend == "nccl":
        from .nccl import NCCL_ALGORITHMS, BackendUnavailable, report_checks, run_allreduce_nccl
        algos = args.algo.split(",") if args.algo else NCCL_ALGORITHMS
        try:
            records = run_allreduce_nccl(args.n_ranks, sizes, algos, dtype=args.dtype,
                                         repeats=args.repeats, iters=args.iters,
                                         timeout=args.timeout)
        except BackendUnavailable as err:
            print(f"gemmlab allreduce --backend nccl: {err}", file=sys.stderr)
            return 2
    else:
        algos = args.algo.split(",") if args.algo else MPI_ALGORITHMS
        records = run_allreduce(args.n_ranks, sizes, algos, dtype=args.dtype,
                                repeats=args.repeats, timeout=args.timeout)
    print(format_table(records))
    if args.backend == "nccl":
        print(report_checks(records))
    if args.fit:
        from .fit import fit_records
        for fit in fit_records(records):
            print(fit)
    if args.json:
        Path(args.json).write_text(json.dumps(records, indent=1) + "\n")
    return 0 if all(r["verified"] and r.get("checks_passed", True) for r in records) else 1
