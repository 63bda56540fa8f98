"""Running a student's code in a thread that can be stopped: the time limit of every lab.

A thread cannot be killed, but an exception can be raised in it asynchronously; :class:`Stop`
is a BaseException, so a student's ``except Exception`` does not swallow it. (It lands at the
next Python instruction: a single long NumPy call finishes first.)
"""
import ctypes
import threading
import traceback

DEFAULT_TIME_LIMIT = 10.0        # seconds a whole run may take before busy threads are stopped


class Stop(BaseException):
    """Raised inside a student's thread when its run has stopped (time limit; for simulated
    ranks also another rank's failure or a deadlock)."""


def stop_thread(thread):
    """Raise Stop inside a thread still busy after the time limit (pure-Python loops only)."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident),
                                               ctypes.py_object(Stop))


def short_traceback(exc, program):
    """"TypeError: ... (line 7: y = x @ w)", the line being the last one of the student's own
    file or cell that the error passed through."""
    filename = getattr(getattr(program, "__code__", None), "co_filename", None)
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == filename]
    where = f" (line {frames[-1].lineno}: {frames[-1].line})" if frames and frames[-1].line else ""
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
        stop_thread(thread)
        thread.join(timeout=2.0)
        return None, f"did not finish within {time_limit:g} s (an endless loop?)"
    return box.get("value"), box.get("error")


def call_plain(fn, args, time_limit=DEFAULT_TIME_LIMIT):
    """:func:`call_limited` as plain data, {"value": ..., "error": ...}: the run helper the labs
    hand to the grader, which runs it in the process that holds the student's code."""
    value, error = call_limited(fn, tuple(args), time_limit)
    return {"value": value, "error": error}

