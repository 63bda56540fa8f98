"""Where each part of the course runs. The simulator path (lessons, exercises, check(), `gemmlab
work`, `gemmlab progress`) runs natively on Linux, macOS and Windows; what needs more says so in
one line on a machine that lacks it:

* POSIX (Linux, macOS): the child that runs a cell on a GPU backend (ended with its process
  group), and the rank labs' ranks (forked processes); a child's pipes are read with select
  there, and by a thread elsewhere (:class:`PipeReader`);
* Linux: the grader (`gemmlab grade`: bubblewrap, /proc, resource limits; its entry point calls
  :func:`needs_linux` first) and MPI from pip (mpich's wheels; ``jobs.HOW_TO_GET_MPI``);
* NVIDIA's compilers (NVVM, ptxas; no macOS wheels): the labs' compile step
  (:func:`missing_compilers`), which without them says what it did not check.

On Windows, POSIX and Linux mean WSL. tests/test_platforms.py checks that every POSIX-only call
in the two packages sits behind :data:`POSIX` or :data:`LINUX` (or ``hasattr``), or in the grader.
"""
import functools
import os
import queue
import select
import sys
import threading

POSIX = os.name == "posix"
LINUX = sys.platform.startswith("linux")


def needs(what, system, why):
    """The one line a part of the course prints where it cannot run: ``what`` needs ``system``
    (``why``), and on Windows, WSL."""
    return (f"{what} needs {system} ({why}); this is {sys.platform}. On Windows, run it in WSL "
            f"(Windows Subsystem for Linux), where the course installs as on Linux.")


def needs_posix(what, why, around=" Or run on the simulator: GEMMLAB_BACKEND=sim."):
    """:func:`needs`' line for a part that needs POSIX processes (``why``), and the way
    ``around`` it."""
    return needs(what, "POSIX", why) + around


def needs_linux(what, why):
    """Exit with :func:`needs`' line unless this is Linux."""
    if not LINUX:
        sys.exit(needs(what, "Linux", why))


class PipeReader:
    """Reads of a child's pipe with a time limit: select, where it takes pipes (POSIX); on
    Windows, where it takes only sockets, a thread that reads the pipe into a queue."""

    def __init__(self, pipe):
        """``pipe``: a file object or a file descriptor."""
        self.fd = pipe if isinstance(pipe, int) else pipe.fileno()
        self.rest, self.chunks = b"", None
        if not POSIX:
            self.chunks = queue.Queue()
            threading.Thread(target=self._pump, daemon=True, name="pipe reader").start()

    def _pump(self):
        chunk = True
        while chunk:
            try:
                chunk = os.read(self.fd, 1 << 20)
            except OSError:         # closed: the end
                chunk = b""
            self.chunks.put(chunk)

    def read(self, n, timeout):
        """Up to ``n`` bytes (b"" at the end of the pipe), or None if none came within
        ``timeout`` seconds."""
        if self.chunks is None:
            # POSIX only: select takes pipes there (self.chunks, the thread's, elsewhere)
            if timeout <= 0 or not select.select([self.fd], [], [], timeout)[0]:
                return None
            return os.read(self.fd, min(n, 1 << 20))
        if not self.rest:
            try:
                self.rest = self.chunks.get(timeout=max(timeout, 0))
            except queue.Empty:
                return None
            if not self.rest:
                self.chunks.put(b"")        # the end, for every later read too
                return b""
        data, self.rest = self.rest[:n], self.rest[n:]
        return data


@functools.cache
def missing_compilers():
    """Which of NVIDIA's compilers the labs' compile step needs are missing here, looked for as
    numba-cuda looks (cuda-pathfinder: the wheels, conda, CUDA_HOME): a tuple of "NVVM" (kernel to
    PTX) and "ptxas" (PTX to machine code: registers, spills, limits); () when both are found."""
    try:
        import cuda.pathfinder as finder
    except ImportError:     # numba-cuda without the CUDA wheels (macOS)
        return ("NVVM", "ptxas")
    missing = []
    try:
        finder.load_nvidia_dynamic_lib("nvvm")
    except Exception:  # every failure to load means "not usable here"
        missing.append("NVVM")
    if not finder.find_nvidia_binary_utility("ptxas"):
        missing.append("ptxas")
    return tuple(missing)


def not_checked(missing):
    """The one line a lab's verdict adds where NVIDIA's compilers ``missing`` (from
    :func:`missing_compilers`) are not installed: what was not checked on this machine, and who
    checks it; "" when nothing is missing."""
    if not missing:
        return ""
    what = ("whether your kernel compiles for a GPU (a Python construct CUDA lacks) and "
            if "NVVM" in missing else "")
    return (f"Not checked on this machine: {what}what ptxas decides (registers, spills, the "
            f"limits of a block), since NVIDIA's {' and '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} not installed here (macOS has no CUDA "
            f"wheels); the grader checks it.")
