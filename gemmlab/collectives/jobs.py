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

MPI is optional (mpich has no Windows wheel): :func:`mpi_missing` says what this machine lacks,
and a lesson's MPI cell runs under ``if jobs.mpi_ready():``, which prints how to get MPI and skips
the cell instead of stopping a "Run all".
"""
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from ..numeric_args import whole_number

TAG = "GEMMLAB_RECORD"
NVLS_OFF = {"NCCL_NVLS_ENABLE": "0"}
WORLD_SIZE_VAR = "GEMMLAB_MPI_RANKS"     # how many ranks mpiexec was asked for, read by world()
HOW_TO_GET_MPI = ("`pip install 'gemmlab[mpi]'` (mpich and mpi4py; Linux and macOS); on Windows, "
                  "run the course in WSL")


def _find_mpiexec():
    """The mpiexec next to this Python (where the ``mpich`` wheel puts it), else the one on PATH,
    else None."""
    local = Path(sys.executable).parent / "mpiexec"
    return str(local) if local.exists() else shutil.which("mpiexec")


def mpiexec_path():
    """The mpiexec jobs start with (:func:`_find_mpiexec`); RuntimeError saying how to get one."""
    found = _find_mpiexec()
    if found is None:
        raise RuntimeError(f"no mpiexec found next to this Python or on PATH. Install MPI with "
                           f"{HOW_TO_GET_MPI}")
    return found


def mpi_missing():
    """What this machine lacks to start MPI jobs, in one line, or None when it has mpi4py and an
    mpiexec."""
    missing = []
    if importlib.util.find_spec("mpi4py") is None:
        missing.append("mpi4py is not installed")
    if _find_mpiexec() is None:
        missing.append("no mpiexec next to this Python or on PATH")
    return "; ".join(missing) or None


def mpi_ready():
    """Whether MPI jobs can start here. If not, print what is missing and how to get MPI, and
    return False: the lessons' MPI cells run under ``if jobs.mpi_ready():``, so without MPI they
    say so and a "Run all" goes on."""
    missing = mpi_missing()
    if missing:
        print(f"MPI is not available here ({missing}): this cell's MPI part is skipped. "
              f"To run it, install MPI with {HOW_TO_GET_MPI}, and restart the kernel.")
    return missing is None


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
    ``expected`` of them (when given). A record may follow the unfinished line of another rank
    (a ``print`` is two writes: its text, then the newline), so the tag is looked for anywhere."""
    prefix = TAG + " "
    records = [json.loads(line[line.index(prefix) + len(prefix):])
               for line in stdout.splitlines() if prefix in line]
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
    missing = mpi_missing()
    if missing:
        raise RuntimeError(f"cannot start MPI processes: {missing}. Install MPI with "
                           f"{HOW_TO_GET_MPI}")
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
        raise RuntimeError(f"mpiexec exited with status {done.returncode} after "
                           f"{time.monotonic() - start:.1f} s (a timeout after {timeout} s, or a "
                           f"rank failed; {_said(done)}).\ncommand: {' '.join(command)}\n"
                           f"{done.stderr[-3000:]}{done.stdout[-1000:]}")
    return done


def _said(done):
    """How much a failed mpiexec wrote: an exit with nothing on either stream is a launcher that
    died before any rank could speak, not a rank's error."""
    if not (done.stdout or done.stderr):
        return "it wrote nothing on stdout or stderr"
    return f"{len(done.stdout)} characters on stdout, {len(done.stderr)} on stderr"


def run(n_ranks, program, timeout=300, env=None, expected=None):
    """Start the job (:func:`mpirun`) and return the records its ranks emitted (:func:`parse`)."""
    return parse(mpirun(n_ranks, program, timeout, env).stdout, expected)
