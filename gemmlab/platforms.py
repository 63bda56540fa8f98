"""Where each part of the course runs. The simulator path (lessons, exercises, check(), `gemmlab
work`, `gemmlab progress`) runs natively on Linux, macOS and Windows; what needs more says so in
one line on a machine that lacks it:

* POSIX (Linux, macOS): the child that runs a cell on a GPU backend (read through pipes, ended
  with its process group);
* Linux: the grader (`gemmlab grade`: bubblewrap, /proc, resource limits; its entry point calls
  :func:`needs_linux` first) and MPI from pip (mpich's wheels; ``jobs.HOW_TO_GET_MPI``);
* NVIDIA's compilers (NVVM, ptxas; no macOS wheels): the labs' compile step
  (:func:`missing_compilers`), which without them says what it did not check.

On Windows, POSIX and Linux mean WSL. tests/test_platforms.py checks that every POSIX-only call
in the two packages sits behind :data:`POSIX` or :data:`LINUX` (or ``hasattr``), or in the grader.
"""
import functools
import os
import sys

POSIX = os.name == "posix"
LINUX = sys.platform.startswith("linux")


def needs(what, system, why):
    """The one line a part of the course prints where it cannot run: ``what`` needs ``system``
    (``why``), and on Windows, WSL."""
    return (f"{what} needs {system} ({why}); this is {sys.platform}. On Windows, run it in WSL "
            f"(Windows Subsystem for Linux), where the course installs as on Linux.")


def needs_posix(what):
    """:func:`needs`' line for a part that reads a child process through pipes (select), and the
    way around it: the simulator, where nothing runs in such a child."""
    return (needs(what, "POSIX", "it reads a child process through pipes") +
            " Or run on the simulator: GEMMLAB_BACKEND=sim.")


def needs_linux(what, why):
    """Exit with :func:`needs`' line unless this is Linux."""
    if not LINUX:
        sys.exit(needs(what, "Linux", why))


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
