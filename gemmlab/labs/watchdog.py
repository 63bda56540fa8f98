"""Stopping a student's code that runs too long, and saying where in it something went wrong.

The labs run student code in the caller's own thread (the simulated CUDA threads are greenlets
of it), so an endless loop would hang the check. :class:`Watchdog` raises :class:`Stop` inside
that thread once the time limit has passed; ``Stop`` is a BaseException, so a student's
``except Exception`` does not swallow it.
"""
import ctypes
import linecache
import threading


class Stop(BaseException):
    """Unwinds student code: raised by the watchdog, or by the labs' own checks."""


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
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self.ident), None)
        return False

    def _fire(self):
        with self.lock:
            if self.running:
                self.fired = True
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self.ident),
                                                           ctypes.py_object(Stop))


def where(exc, filename):
    """' at line 12 (`x = 1 / 0`)': the last line of ``filename`` in the exception's traceback."""
    found = ""
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            text = linecache.getline(filename, tb.tb_lineno).strip()
            found = f" at line {tb.tb_lineno}" + (f" (`{text}`)" if text else "")
        tb = tb.tb_next
    return found
