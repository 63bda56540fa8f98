"""One updating line saying what a long ``check()`` is doing ("compiling for sm_75, sm_90",
"case 2 of 3"): silent for a check done within a second, then rewritten in place on stdout at
each step and wiped at the end. Stdout, not stderr: in Jupyter the line then belongs to the same
output as the verdict printed after it, which overwrites it (a carriage return), instead of
staying above the PASS as a red stderr block. Steps are said with :func:`step` from anywhere
below a :func:`showing` block (the labs, the compile); outside one, :func:`step` does nothing."""
import sys
import threading
import time
from contextlib import contextmanager

AFTER = 1.0                         # seconds before the first line shows
_state = {"active": False, "text": "", "shown": False, "lock": threading.Lock()}


def _show(text):
    sys.stdout.write("\r\033[K" + text[:100] + ("" if text else "\r"))
    sys.stdout.flush()


def step(text):
    """Say what the check is doing now (shown once it has run past :data:`AFTER` seconds)."""
    with _state["lock"]:
        if not _state["active"]:
            return
        _state["text"] = text
        if _state["shown"]:
            _show(f"checking: {text}")


def _late():
    with _state["lock"]:
        if _state["active"] and _state["text"]:
            _state["shown"] = True
            _show(f"checking: {_state['text']}")


@contextmanager
def showing():
    """A check's lifetime: its steps show on one line after :data:`AFTER` s, wiped at the end."""
    with _state["lock"]:
        nested = _state["active"]
        _state.update(active=True, text="starting", shown=False)
    timer = None if nested else threading.Timer(AFTER, _late)
    if timer is not None:
        timer.daemon = True
        timer.start()
    start = time.monotonic()
    try:
        yield
    finally:
        if timer is not None:
            timer.cancel()
            with _state["lock"]:
                if _state["shown"]:
                    _show("")
                _state.update(active=False, text="", shown=False, seconds=time.monotonic() - start)
