"""Stopping a student's code that runs in the caller's own thread.

The kernel labs run student code in the caller's own thread (the simulated CUDA threads are
greenlets of it), so an endless loop would hang the check. :class:`Watchdog` raises
:class:`~gemmlab.labs.limits.Stop` inside that thread once the time limit has passed.
"""
import threading

from .limits import Stop, raise_in_thread


class Watchdog:
    """Raise :class:`Stop` in the current thread after ``seconds``, unless stopped first (use
    as a context manager; ``fired`` says whether it went off)."""

    def __init__(self, seconds):
        self.seconds = seconds
        self.ident = threading.get_ident()
        self.lock = threading.Lock()
        self.running, self.fired = True, False
        self.timer = threading.Timer(seconds, self._fire)
        self.timer.daemon = True

    def __enter__(self):
        self.timer.start()
        return self

    def __exit__(self, *exc):
        with self.lock:
            self.running = False
            self.timer.cancel()
            if self.fired:        # clear the exception in case it has not been delivered yet
                raise_in_thread(self.ident, None)
        return False

    def _fire(self):
        with self.lock:
            if self.running:
                self.fired = True
                raise_in_thread(self.ident, Stop)
