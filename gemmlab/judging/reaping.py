"""Finding and ending the processes a student's code started, from the process above them:
``child_pids`` (this process's children, those of every thread) and ``set_subreaper`` (Linux
``PR_SET_CHILD_SUBREAPER``: an orphan below this process is re-parented here, not to init, so a
detached process stays findable). The grader's process trees (its ``confine`` module) and the
warm worker (:func:`gemmlab.judging.worker.warm`) both end what was left this way."""
import ctypes
import os

_PR_SET_CHILD_SUBREAPER = 36


def set_subreaper(on):
    """Make this process a child subreaper (or stop being one); whether the kernel agreed."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def child_pids():
    """Pids of this process's children (those of all its threads), None where the kernel has no
    /proc/self/task/*/children."""
    pids = set()
    try:
        for tid in os.listdir("/proc/self/task"):
            try:
                with open(f"/proc/self/task/{tid}/children", "rb") as f:
                    pids.update(int(p) for p in f.read().split())
            except FileNotFoundError:
                if not os.path.exists(f"/proc/self/task/{tid}"):
                    continue            # a thread that just ended
                return None
    except OSError:
        return None
    return pids
