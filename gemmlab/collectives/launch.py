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


def _check_request(sizes, algos, dtype):
    unknown = [a for a in algos if a not in MPI_ALGORITHMS]
    if unknown or not algos:
        raise ValueError(f"algorithms {list(algos)}: expected some of {', '.join(MPI_ALGORITHMS)}")
    if dtype not in DTYPES:
        raise ValueError(f"dtype {dtype!r}: expected one of {', '.join(DTYPES)}")
    itemsize = np.dtype(dtype).itemsize
    for size in sizes:
        if size <= 0 or size % itemsize:
            raise ValueError(f"size {size} bytes: expected a positive multiple of {itemsize} "
                             f"(the size of one {dtype})")


def mpirun(n_ranks, program, timeout=300):
    """Run ``mpiexec -n n_ranks python -m mpi4py <program...>`` and return the finished process.

    ``program`` is what follows ``python -m mpi4py``: a script path or ``["-m", module, ...]``.
    ``MPIEXEC_TIMEOUT`` makes mpiexec kill a job that outlives ``timeout`` seconds (a deadlock
    ends in an error rather than a wait forever). Raises RuntimeError if the job fails.
    """
    if isinstance(n_ranks, bool) or not isinstance(n_ranks, (int, np.integer)) or n_ranks < 1:
        raise ValueError(f"n_ranks={n_ranks!r}: expected a whole number of processes >= 1")
    command = [mpiexec_path(), "-n", str(int(n_ranks)), sys.executable, "-m", "mpi4py",
               *map(str, program)]
    env = dict(os.environ, MPIEXEC_TIMEOUT=str(int(timeout)))
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
    _check_request(sizes, algos, dtype)
    done = mpirun(n_ranks, ["-m", "gemmlab.collectives.worker", "--algos", ",".join(algos),
                            "--sizes", ",".join(map(str, sizes)), "--dtype", dtype,
                            "--repeats", repeats, "--warmup", warmup], timeout=timeout)
    records = [_record(line) for line in done.stdout.splitlines() if line.startswith(RESULT_TAG)]
    if len(records) != len(algos) * len(sizes):
        raise RuntimeError(f"expected {len(algos) * len(sizes)} results from the MPI job, got "
                           f"{len(records)}.\nstdout:\n{done.stdout[-3000:]}")
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
    parser.add_argument("--np", type=int, default=4, dest="n_ranks", help="number of processes")
    parser.add_argument("--size", default="64MiB",
                        help="bytes per rank, e.g. 64MiB; a comma-separated list for a sweep")
    parser.add_argument("--algo", default=",".join(MPI_ALGORITHMS),
                        help="comma-separated algorithms out of ring, centralized, mpi "
                             "(mpi = MPI's own Allreduce, the reference)")
    parser.add_argument("--dtype", default="float32", choices=DTYPES)
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per size (median)")
    parser.add_argument("--timeout", type=int, default=300, help="seconds before the job is killed")
    parser.add_argument("--fit", action="store_true",
                        help="fit alpha and beta per algorithm over the sizes (needs >= 2 sizes)")
    parser.add_argument("--json", help="also write the records to this JSON file")


def main(args):
    """Run ``gemmlab allreduce`` with parsed arguments; exit status 1 if a result is wrong."""
    records = run_allreduce(args.n_ranks, args.size.split(","), args.algo.split(","),
                            dtype=args.dtype, repeats=args.repeats, timeout=args.timeout)
    print(format_table(records))
    if args.fit:
        from .fit import fit_records
        for fit in fit_records(records):
            print(fit)
    if args.json:
        Path(args.json).write_text(json.dumps(records, indent=1) + "\n")
    return 0 if all(r["verified"] for r in records) else 1
