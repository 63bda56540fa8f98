"""Finding and ending the processes a student's code started, from the process above them:
``child_pids`` (this process's children, those of every thread) and ``set_subreaper`` (Linux
``PR_SET_CHILD_SUBREAPER``: an orphan below this process is re-parented here, not to init, so a
detached process stays findable) and ``end_children`` (kill them until none comes back). The grader's process trees (its ``confine`` module) and the
warm worker (:func:`gemmlab.judging.worker.warm`) both end what was left this way."""
import ctypes
import os
import signal
import time

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


def end_children(spare=frozenset, seconds=5.0, quiet=3):
    """SIGKILL and reap every child of this process but those ``spare()`` names (asked each
    round), again and again until none has appeared for ``quiet`` rounds in a row (3 if none
    ever did): an orphan that forks and exits to change its pid is re-parented here at each hop,
    and is killed at one of them. Whether it got there within ``seconds`` (True too where the
    kernel cannot list children)."""
    deadline, calm, seen = time.monotonic() + seconds, 0, False
    while calm < (quiet if seen else 3):
        if time.monotonic() >= deadline:
            return False
        kids = child_pids()
        if kids is None:
            return True
        victims = kids - set(spare())
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        for pid in victims:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        calm = 0 if victims else calm + 1
        seen = seen or bool(victims)
        if not victims:
            time.sleep(0.005)
    return True
