"""Where students' code runs: the labs' runtimes and question kinds.

(Branch klabs owns this file: the kernel labs' imports go above the dlabs block.)
"""

# --- dlabs: simulated ranks, the MPI runner and the distributed labs (lessons 06-15) ---
from .mpi import run_mpi
from .ranks import RankComm, RankRun, run_ranks
from .ring import reference_ring_allreduce, ring_run

__all__ = ["run_ranks", "RankRun", "RankComm", "run_mpi", "ring_run", "reference_ring_allreduce"]
# --- end dlabs ---
