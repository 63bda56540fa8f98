"""``gemmlab allreduce``: time all-reduce algorithms on N processes and check every rank's result.

The parent's side of the runs: it checks the request, starts the ranks through the one launcher
(:mod:`gemmlab.collectives.jobs`) and adds nccl-tests' algbw and busbw to the records they emit.
:func:`run_allreduce` runs :mod:`gemmlab.collectives.allreduce_mpi_rank` on CPU processes over
MPI (ring, centralized, MPI's own Allreduce); :func:`run_allreduce_nccl` runs
:mod:`gemmlab.collectives.allreduce_nccl_rank` with one process per GPU (our ring, as a CUDA graph
and step by step from Python, beside NCCL's own collectives). Each returns one record per (algorithm, size) with the median
time and whether every rank got the exact sum.
"""
import json
import re
import sys
from pathlib import Path

import numpy as np

from ..numeric_args import whole_number
from . import jobs
from . import cost
from .nccl import BackendUnavailable, check_gpu_count, visible_gpus
from .nccl_graph import ALGORITHMS as NCCL_ALGORITHMS, ALLREDUCE_ALGORITHMS, COLLECTIVES

MPI_ALGORITHMS = ("ring", "centralized", "mpi")
BACKENDS = ("mpi", "nccl")            # --backend nccl: one process per GPU, see collectives.nccl
NCCL_DEFAULT = ALLREDUCE_ALGORITHMS   # NCCL's reduce-scatter and all-gather are timed on request
SWEEPS = {"mpi": [1 << k for k in range(13, 27)],      # --sweep: 8 KiB .. 64 MiB on CPU cores,
          "nccl": [1 << k for k in range(13, 31)]}     # 8 KiB .. 1 GiB on GPUs (nccl-tests' range)
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


def check_request(sizes, algos, dtype, known=MPI_ALGORITHMS, n_ranks=1, repeats=1, warmup=0,
                  iters=1):
    """Raise ValueError unless the counts are whole numbers (``warmup`` >= 0, the others >= 1),
    ``algos`` are some of ``known`` and every size holds whole items: both backends' checks, so
    the library and ``gemmlab allreduce`` refuse the same requests."""
    whole_number("the number of ranks (--np)", n_ranks)
    for name, value, least in (("repeats", repeats, 1), ("warmup", warmup, 0), ("iters", iters, 1)):
        whole_number(name, value, least)
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


def run_allreduce(n_ranks, sizes, algos=MPI_ALGORITHMS, dtype="float32", repeats=5, warmup=1,
                  timeout=300):
    """Time the MPI all-reduce algorithms on ``n_ranks`` processes, one mpiexec job for all sizes.

    Returns a list of dicts: algorithm, n_ranks, size_bytes, dtype, seconds (median over
    ``repeats``), times, verified, algbw and busbw (GB/s, nccl-tests' convention). Raises
    RuntimeError if the job fails or outlives ``timeout`` seconds.
    """
    sizes, algos = [parse_size(s) for s in sizes], list(algos)
    check_request(sizes, algos, dtype, MPI_ALGORITHMS, n_ranks, repeats, warmup)
    return _run("gemmlab.collectives.allreduce_mpi_rank", n_ranks, sizes, algos, dtype, repeats,
                warmup, timeout)


def run_allreduce_nccl(n_ranks, sizes, algos=NCCL_DEFAULT, dtype="float32", repeats=5,
                       warmup=2, iters=20, timeout=600):
    """Time our ring and NCCL's collectives on ``n_ranks`` GPUs (one process each), checking every
    GPU's result, and our and NCCL's reduce-scatter and all-gather too, against the exact sum.

    ``algos``: some of ``nccl_graph.ALGORITHMS``; NCCL's reduce-scatter and all-gather need each
    size to divide into equal blocks per rank. Returns one record per (algorithm, size), as
    :func:`run_allreduce` does (median seconds over ``repeats`` samples of ``iters`` back-to-back
    calls, algbw, busbw with the collective's factor, verified), plus ``collective``, ``checks``
    (the reduce-scatter and all-gather results), ``checks_passed``, ``sent_bytes_per_rank`` (our
    ring's ledger) and the machine, GPU and NCCL version. Raises BackendUnavailable without CuPy
    or with fewer GPUs than ``n_ranks``.
    """
    sizes, algos = [parse_size(s) for s in sizes], list(algos)
    check_request(sizes, algos, dtype, NCCL_ALGORITHMS, n_ranks, repeats, warmup, iters)
    blocks = [a for a in algos if a in COLLECTIVES]
    uneven = [s for s in sizes if s % (n_ranks * np.dtype(dtype).itemsize)]
    if blocks and uneven:
        raise ValueError(f"{', '.join(blocks)} at {uneven} bytes: NCCL's reduce-scatter and "
                         f"all-gather give each of the {n_ranks} ranks an equal block, so each "
                         f"size must be a multiple of {n_ranks * np.dtype(dtype).itemsize} bytes")
    check_gpu_count(n_ranks, visible_gpus())
    return _run("gemmlab.collectives.allreduce_nccl_rank", n_ranks, sizes, algos, dtype, repeats,
                warmup, timeout, "--iters", iters)


def _run(rank_module, n_ranks, sizes, algos, dtype, repeats, warmup, timeout, *options):
    """Run a checked request: module ``rank_module`` on ``n_ranks`` processes (one job for every
    size), one record per (algorithm, size), with their bandwidths added."""
    records = jobs.run(n_ranks, ["-m", rank_module, "--algos", ",".join(algos),
                                 "--sizes", ",".join(map(str, sizes)), "--dtype", dtype,
                                 "--repeats", repeats, "--warmup", warmup, *options],
                       timeout=timeout, expected=len(algos) * len(sizes))
    return with_bandwidths(records)


def with_bandwidths(records):
    """The records with nccl-tests' algbw and busbw (GB/s) added, busbw with the factor of each
    record's ``collective`` (all-reduce when it names none)."""
    for r in records:
        r["algbw"] = cost.algbw(r["size_bytes"], r["seconds"])
        r["busbw"] = cost.busbw(r.get("collective", "allreduce"), r["n_ranks"], r["size_bytes"],
                                r["seconds"])
    return records


def format_table(records):
    """The records as an aligned text table, one line per (algorithm, size)."""
    lines = [f"{'algorithm':<20}{'ranks':>6}{'size':>12}{'time (ms)':>12}{'algbw GB/s':>12}"
             f"{'busbw GB/s':>12}  result"]
    for r in records:
        lines.append(f"{r['algorithm']:<20}{r['n_ranks']:>6}{format_size(r['size_bytes']):>12}"
                     f"{r['seconds'] * 1e3:>12.3f}{r['algbw']:>12.3f}{r['busbw']:>12.3f}  "
                     f"{'exact sum on every rank' if r['verified'] else 'WRONG'}")
    return "\n".join(lines)


def add_arguments(parser):
    """The options of ``gemmlab allreduce``."""
    parser.add_argument("--backend", choices=BACKENDS, default="mpi",
                        help="mpi: processes on CPU cores; nccl: one process per GPU, our ring "
                             "over NCCL send/recv against NCCL's own collectives")
    parser.add_argument("--np", type=int, default=4, dest="n_ranks", help="number of processes")
    parser.add_argument("--size", default=None,
                        help="bytes per rank, e.g. 64MiB (the default); a comma-separated list "
                             "for a sweep")
    parser.add_argument("--sweep", action="store_true",
                        help="sizes in powers of two from 8 KiB to 64 MiB (mpi) or 1 GiB (nccl)")
    parser.add_argument("--algo", default=None,
                        help="comma-separated algorithms; mpi: ring, centralized, mpi (MPI's own "
                             "Allreduce), default all three; nccl: ring (ours as a CUDA graph), "
                             "ring_stepwise (ours driven step by step from Python), ring_nvlink "
                             "(ours reading the peer's memory, the addition inside the transfer), "
                             "nccl (NCCL's allReduce), default these four, and nccl_reduce_scatter, "
                             "nccl_allgather (NCCL's, timed with their own busbw factor)")
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


RANK_BASE_BYTES = 64 << 20    # one MPI rank (allreduce_mpi_rank): Python, NumPy, mpi4py (measured ~54 MiB)
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
    """Raise ValueError, with the fix, for what only the command line checks: a --timeout below 1,
    unreadable sizes, or an MPI job whose ranks would not fit in memory together (estimated from
    the largest size). The counts and the sizes' values are :func:`check_request`'s."""
    whole_number("--timeout", args.timeout)
    largest = max(parse_size(s) for s in sizes)
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
    than --np) or the job fails, with the reason."""
    try:
        return _main(args)
    except BackendUnavailable as err:
        print(f"gemmlab allreduce --backend nccl: {err}", file=sys.stderr)
    except (ValueError, RuntimeError) as err:
        print(f"gemmlab allreduce: {err}", file=sys.stderr)
    return 2


def _main(args):
    """The command's work; :func:`main` turns its errors into exit status 2."""
    sizes = requested_sizes(args)
    check_arguments(args, sizes)
    if args.backend == "nccl":
        algos = args.algo.split(",") if args.algo else NCCL_DEFAULT
        records = run_allreduce_nccl(args.n_ranks, sizes, algos, dtype=args.dtype,
                                     repeats=args.repeats, iters=args.iters, timeout=args.timeout)
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


def report_checks(records):
    """One line on the reduce-scatter and all-gather checks of :func:`run_allreduce_nccl`."""
    failed = [f"{r['algorithm']} {name} at {r['size_bytes']} B" for r in records
              for name, ok in r["checks"].items() if ok is False]
    skipped = sorted({r["size_bytes"] for r in records
                      for ok in r["checks"].values() if ok is None})
    line = ("reduce-scatter and all-gather (ours and NCCL's): exact on every GPU" if not failed
            else "reduce-scatter / all-gather WRONG: " + "; ".join(failed))
    if skipped:
        line += (f" (NCCL's not run at {', '.join(map(str, skipped))} B: they need the item "
                 f"count to divide by the ranks)")
    return line


GOALS = {"fraction_of_nccl": 0.90, "fraction_of_nccl_goal": 0.95, "step_us": 30, "step_us_goal": 20}


OUR_RINGS = ("ring_nvlink", "ring", "ring_stepwise")   # the first one swept is held to GOALS


def sweep_summary(records, headline=256 * 2**20):
    """What the lessons quote from one N's sweep (records of :func:`run_allreduce_nccl`): each
    algorithm's busbw at ``headline`` bytes and its fraction of NCCL's all-reduce there, the lowest
    fraction of each of our rings at any size from ``headline`` up, the alpha-beta fit of each
    all-reduce (alpha is the cost of one ring step), and whether every check passed. The goals
    (:data:`GOALS`: >= 90% of NCCL's busbw from 256 MiB up, goal 95%; <= 30 us per step, goal 20
    us) are read against ``ring_algorithm``, the first of :data:`OUR_RINGS` in the sweep."""
    from .fit import fit_records
    ranks = {r["n_ranks"] for r in records}
    if len(ranks) != 1:
        raise ValueError(f"a sweep summary takes the records of one number of ranks, got {ranks}")
    at = {r["algorithm"]: r["busbw"] for r in records if r["size_bytes"] == headline}
    busbw = {(r["algorithm"], r["size_bytes"]): r["busbw"] for r in records}
    lowest = {}
    for ring in OUR_RINGS:
        large = [s for (a, s) in busbw if a == ring and s >= headline and ("nccl", s) in busbw]
        if large:
            lowest[ring] = min(busbw[(ring, s)] / busbw[("nccl", s)] for s in large)
    swept = {r["algorithm"] for r in records}
    ring = next((name for name in OUR_RINGS if name in swept), None)
    several_sizes = len({r["size_bytes"] for r in records}) > 1
    return {"n_ranks": ranks.pop(), "headline_bytes": headline, "busbw_at_headline": at,
            "fraction_of_nccl_at_headline": ({a: bw / at["nccl"] for a, bw in at.items()}
                                             if at.get("nccl") else {}),
            "ring_algorithm": ring,
            "ring_fraction_of_nccl": (at[ring] / at["nccl"] if at.get("nccl") and ring in at
                                      else None),
            "ring_lowest_fraction_from_headline": lowest.get(ring),
            "lowest_fraction_from_headline": lowest,
            "goals": GOALS,
            "fits": [{"algorithm": f.algorithm, "alpha_us": f.alpha * 1e6,
                      "bandwidth_GBps": f.bandwidth, "model": f.model}
                     for f in (fit_records(records) if several_sizes else [])],
            "all_verified": all(r["verified"] and r["checks_passed"] for r in records)}
