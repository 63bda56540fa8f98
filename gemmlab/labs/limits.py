"""Stopping a student's code that runs too long, and saying where in it something went wrong.

A thread cannot be killed, but an exception can be raised in it asynchronously; :class:`Stop`
is a BaseException, so a student's ``except Exception`` does not swallow it. (It lands at the
next Python instruction: a single long NumPy call finishes first.) :func:`call_limited` runs a
function in a thread of its own and stops it; the kernel labs, whose code runs in the caller's
own thread, use :class:`gemmlab.labs.watchdog.Watchdog`.
"""
import ctypes
import linecache
import threading

DEFAULT_TIME_LIMIT = 10.0        # seconds a whole run may take before busy threads are stopped
TIME_LIMIT = 5.0                 # seconds the distributed labs give one run of a student's code


class Stop(BaseException):
    """Raised inside student code to unwind it: the time limit, a lab's own checks, or (for
    simulated ranks) another rank's failure or a deadlock."""


def raise_in_thread(ident, exc_type=Stop):
    """Raise ``exc_type`` asynchronously in the thread ``ident`` (pure-Python code only);
    ``exc_type`` None clears one not yet delivered."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(ident), None if exc_type is None else ctypes.py_object(exc_type))


def student_line(exc, filename):
    """(number, text) of the last line of ``filename`` (the student's file or cell) that the
    traceback of ``exc`` passed through, text '' when its source is unknown; None if none."""
    number = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            number = tb.tb_lineno
        tb = tb.tb_next
    return None if number is None else (number, linecache.getline(filename, number).strip())


def where(exc, filename):
    """' at line 12 (`x = 1 / 0`)': :func:`student_line` as the kernel labs quote it."""
    found = student_line(exc, filename)
    if found is None:
        return ""
    return f" at line {found[0]}" + (f" (`{found[1]}`)" if found[1] else "")


def short_traceback(exc, program):
    """"TypeError: ... (line 7: y = x @ w)": :func:`student_line` of ``program``'s file or cell
    as the distributed labs quote it (only when its source is known)."""
    found = student_line(exc, getattr(getattr(program, "__code__", None), "co_filename", None))
    where = f" (line {found[0]}: {found[1]})" if found and found[1] else ""
    return f"{type(exc).__name__}: {exc}{where}"


def call_limited(fn, args, time_limit=DEFAULT_TIME_LIMIT):
    """``fn(*args)`` in a thread that is stopped after ``time_limit`` seconds: (value, None), or
    (None, what went wrong) when it raised or did not finish."""
    box = {}

    def body():
        try:
            box["value"] = fn(*args)
        except Stop:
            pass
        except Exception as exc:  # the student's code: report it
            box["error"] = f"raised {short_traceback(exc, fn)}"

    thread = threading.Thread(target=body, daemon=True)
    thread.start()
    thread.join(timeout=time_limit)
    if thread.is_alive():
        raise_in_thread(thread.ident)
        thread.join(timeout=2.0)
        return None, f"did not finish within {time_limit:g} s (an endless loop?)"
    return box.get("value"), box.get("error")


def call_plain(fn, args, time_limit=DEFAULT_TIME_LIMIT):
    """:func:`call_limited` as plain data, {"value": ..., "error": ...}: the run helper the labs
    hand to :func:`~gemmlab.judging.where.where_it_lives`, which runs it in the process that holds
    the student's code."""
    value, error = call_limited(fn, tuple(args), time_limit)
    return {"value": value, "error": error}


def seconds(value):
    """A time limit in words: '60 s' for 59.97, '0.5 s' for 0.5."""
    return f"{value:.0f} s" if value >= 10 else f"{value:.2g} s"
