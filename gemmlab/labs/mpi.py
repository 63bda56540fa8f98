"""``run_mpi``: a student's all-reduce over real MPI processes, timed beside the course's ring and
MPI's own Allreduce, as ``gemmlab allreduce`` does for the course's algorithms.

    gl.labs.run_mpi(ring_allreduce, np=4, size="16MiB")

First the function runs on simulated ranks (a small integer buffer), so a deadlock or a wrong sum
is reported at once, with the simulator's diagnosis, instead of after an MPI timeout. Then the
source of the cell that defines it travels to ``np`` MPI processes started by the collectives'
launcher (:mod:`gemmlab.collectives.jobs`), each of which runs the course's preamble and the
cell, and times ``yours``, ``ring`` (the course's MPI ring) and ``mpi`` (MPI_Allreduce) on the
same buffers, checking every rank's sum exactly.
"""
import os
import tempfile

import numpy

from ..collectives import jobs
from ..collectives.allreduce_command import (check_request, format_size, format_table, parse_size,
                                  with_bandwidths)
from ..judging import code_of, is_missing
from .ranks import run_ranks

ALGORITHMS = ("yours", "ring", "mpi")
REHEARSAL_ITEMS = 1031          # values per rank of the simulated try-run (not divisible by N)


def rehearse(fn, n_ranks, seed=0):
    """Run ``fn(comm, x)`` on ``n_ranks`` simulated ranks with small integers; '' when every rank
    returns the exact sum, else what went wrong."""
    rng = numpy.random.default_rng(seed)
    inputs = [rng.integers(-100, 101, REHEARSAL_ITEMS).astype(numpy.int64)
              for _ in range(n_ranks)]
    total = numpy.sum(inputs, axis=0)
    run = run_ranks(fn, [(x,) for x in inputs], allow_collectives=False)
    if run.error:
        return run.error
    if all(is_missing(out) for out in run.outputs):
        return f"{fn.__name__} returns nothing yet"
    for r, out in enumerate(run.outputs):
        try:
            right = numpy.array_equal(numpy.asarray(out), total)
        except Exception:
            right = False
        if not right:
            return (f"rank {r} does not return the sum of the ranks' buffers (check('07.lab_ring', "
                    f"{fn.__name__}) says why)")
    return ""


def run_mpi(fn, np=4, size="16MiB", dtype="float32", repeats=5, warmup=1, timeout=300):
    """Time ``fn(comm, x)`` on ``np`` MPI processes, ``size`` bytes per rank, beside the course's
    ring and MPI's own Allreduce; print the table (time, algbw, busbw, whether every rank got the
    exact sum) and return its records. When the function fails on simulated ranks first, print
    why and return None: nothing is launched."""
    if not callable(fn):
        raise TypeError(f"run_mpi: expected your all-reduce function, got {type(fn).__name__}")
    nbytes = parse_size(size)
    check_request([nbytes], ["ring"], dtype)
    problem = rehearse(fn, np)
    if problem:
        print(f"run_mpi: not launched; on {np} simulated ranks: {problem}")
        return None
    name = fn.__name__
    options = ["--size", nbytes, "--dtype", dtype, "--repeats", repeats, "--warmup", warmup]
    program = ["-m", "gemmlab.labs.run_mpi_rank", "--name", name, *options]
    if (fn.__module__ or "").partition(".")[0] == "gemmlab":    # the course's reference programs
        records = jobs.run(np, program + ["--module", fn.__module__], timeout=timeout,
                           expected=len(ALGORITHMS))
    else:
        source, name = code_of(fn)
        program[program.index("--name") + 1] = name
        handle, path = tempfile.mkstemp(prefix="gemmlab-lab-", suffix=".py")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as f:
                f.write(source)
            records = jobs.run(np, program + ["--source", path], timeout=timeout,
                               expected=len(ALGORITHMS))
        finally:
            os.unlink(path)
    records = with_bandwidths(records)
    print(format_table(records))
    bus = {r["algorithm"]: r["busbw"] for r in records}
    print(f"{name} on {np} processes, {format_size(nbytes)} per rank: "
          f"{bus['yours'] / bus['mpi']:.0%} of MPI_Allreduce's busbw, "
          f"{bus['yours'] / bus['ring']:.0%} of the course's ring")
    return records
