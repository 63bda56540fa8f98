"""The one launcher: start N ranks over MPI and collect the records they report.

Every run of the course on several processes goes through this module: ``gemmlab allreduce``
(MPI and NCCL backends), ``gemmlab tp`` (Megatron's layers over MPI or NCCL) and the benchmark
scripts. The parent calls :func:`run`; each rank calls :func:`world` for its communicator and
:func:`emit` for each record it reports. One protocol: a record is one line of standard output,
:data:`TAG`, a space, then the record as JSON; :func:`parse` reads them back.

The job is ``mpiexec -n N python -m mpi4py <program>``: ``python -m mpi4py`` aborts the whole job
when one rank raises, instead of leaving the others waiting forever; ``MPIEXEC_TIMEOUT`` makes
mpiexec kill a job that outlives its time, so a deadlock ends in an error; ``NCCL_NVLS_ENABLE=0``
is in every rank's environment (NVLink multicast stays off, whatever the job does).
"""
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from ..perfmodel._checks import whole_number

TAG = "GEMMLAB_RECORD"
NVLS_OFF = {"NCCL_NVLS_ENABLE": "0"}
WORLD_SIZE_VAR = "GEMMLAB_MPI_RANKS"     # how many ranks mpiexec was asked for, read by world()


def mpiexec_path():
    """The mpiexec next to this Python (where the ``mpich`` wheel puts it), else the one on PATH."""
    local = Path(sys.executable).parent / "mpiexec"
    if local.exists():
        return str(local)
    found = shutil.which("mpiexec")
    if found is None:
        raise RuntimeError("no mpiexec found next to this Python or on PATH: this cell needs MPI. "
                           "Install it with `pip install 'gemmlab[mpi]'` (Linux, macOS: mpich and "
                           "mpi4py); on Windows, run the course in WSL")
    return found


def world():
    """A rank's ``MPI.COMM_WORLD``, checked against the rank count the launcher asked for.

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


def emit(record, comm=None):
    """Report ``record`` (a JSON-able dict) to the parent; with ``comm``, from its rank 0 only.
    The line goes out in one write, so lines of several ranks do not mix (mpiexec forwards every
    rank's output as it comes; a line up to the pipe's atomic size, 4 KiB, stays whole)."""
    if comm is None or comm.Get_rank() == 0:
        sys.stdout.write(f"{TAG} {json.dumps(record)}\n")
        sys.stdout.flush()


def parse(stdout, expected=None):
    """The records in a job's standard output, in order; a RuntimeError unless there are
    ``expected`` of them (when given)."""
    prefix = TAG + " "
    records = [json.loads(line[len(prefix):]) for line in stdout.splitlines()
               if line.startswith(prefix)]
    if expected is not None and len(records) != expected:
        raise RuntimeError(f"expected {expected} record(s) from the job, got {len(records)}.\n"
                           f"its output ended with:\n{stdout[-3000:]}")
    return records


def mpirun(n_ranks, program, timeout=300, env=None):
    """Run ``mpiexec -n n_ranks python -m mpi4py <program...>`` and return the finished process.

    ``program``: what follows ``python -m mpi4py``, a script path or ``["-m", module, ...]``.
    ``env``: variables added to every rank's environment (NCCL_NVLS_ENABLE=0 always is).
    Raises RuntimeError if the job fails or outlives ``timeout`` seconds.
    """
    n_ranks = whole_number("n_ranks (the number of processes)", n_ranks)
    command = [mpiexec_path(), "-n", str(n_ranks), sys.executable, "-m", "mpi4py",
               *map(str, program)]
    env = {**os.environ, **(env or {}), **NVLS_OFF, "MPIEXEC_TIMEOUT": str(int(timeout)),
           WORLD_SIZE_VAR: str(n_ranks)}
    start = time.monotonic()
    try:
        done = subprocess.run(command, capture_output=True, text=True, env=env,
                              timeout=timeout + 30)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"mpiexec did not finish within {timeout + 30} s: "
                           f"{' '.join(command)}") from None
    # MPICH's mpiexec can exit 0 after killing a job at MPIEXEC_TIMEOUT (seen with mpich 5.0.2
    # when a proxy is still starting), so a job that lived to its time limit fails here whatever
    # the exit status says.
    if time.monotonic() - start >= timeout:
        raise RuntimeError(f"the job reached its time limit of {timeout} s and was killed "
                           f"(a deadlock, or a job too large for the limit).\n"
                           f"command: {' '.join(command)}\n{done.stderr[-3000:]}")
    if done.returncode != 0:
        raise RuntimeError(f"mpiexec exited with status {done.returncode} (a timeout after "
                           f"{timeout} s, or a rank failed).\ncommand: {' '.join(command)}\n"
                           f"{done.stderr[-3000:]}{done.stdout[-1000:]}")
    return done


def run(n_ranks, program, timeout=300, env=None, expected=None):
    """Start the job (:func:`mpirun`) and return the records its ranks emitted (:func:`parse`)."""
    return parse(mpirun(n_ranks, program, timeout, env).stdout, expected)
