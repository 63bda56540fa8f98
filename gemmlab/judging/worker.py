"""The untrusted end of judging code: a fresh Python that runs one student cell and then serves
calls to the function it defines (``python -m gemmlab.judging.worker``). It never sees a
reference answer, a seed or a question's cases beyond the arguments of each call: the judging
stays in the process that asks (:mod:`gemmlab.judging.cell`). The grader starts it confined
(its isolate module); a notebook's ``check()`` starts it as a plain child, so that both
run the cell alone, the way the grade does. It is the package's one cell worker, the one module
called ``worker``: the other programs started in processes of their own are ranks of a job, named
by role (``gemmlab.collectives.allreduce_mpi_rank``, ``gemmlab.parallel.tp_rank``, ...).

Protocol, on the process's stdin/stdout (then pointed at /dev/null, so that the student's prints
cannot mix with it): frames of an 8-byte big-endian length and a JSON object.

* ``{"op": "load", "source": cell text, "name": name}`` runs the course's
  preamble (:data:`gemmlab.judging.source.PREAMBLE`), then the cell with ``check`` a no-op;
  replies ``{"ok": true, "state": "missing"|"none"|"ellipsis"|"value", "callable": bool, "type":
  name, "repr": text}``, or ``{"ok": false, "error": {...}}`` when the cell raised before
  defining ``name``.
* ``{"op": "call", "args": [...], "kwargs": {...}}`` calls it; ``"helper":
  "gemmlab.module:function"`` calls ``function(fn, *args, **kwargs)`` instead (a run helper of
  the package: instrumented simulator, simulated ranks; see
  :func:`gemmlab.judging.where.where_it_lives`). Replies ``{"ok": true, "value": encoded}`` or
  ``{"ok": false, "error": {"type", "message"}}``. Arguments are the worker's own copies: what
  the code writes into them stays here.
"""
import json
import linecache
import os
import struct
import sys

from .source import PREAMBLE
from .where import package_object

CELL_FILE = "<your cell>"
MAX_FRAME = 128 << 20


def read_frame(stream):
    """One frame's JSON object, or None at end of stream; ValueError for a malformed frame."""
    head = _read_exactly(stream, 8)
    if head is None:
        return None
    (size,) = struct.unpack(">Q", head)
    if size > MAX_FRAME:
        raise ValueError(f"a frame of {size} bytes")
    body = _read_exactly(stream, size)
    if body is None:
        raise ValueError("the stream ended inside a frame")
    try:
        return json.loads(body)
    except RecursionError:
        raise ValueError("a frame nested too deeply") from None


def _read_exactly(stream, n):
    chunks, left = [], n
    while left:
        chunk = stream.read(left)
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def frame(obj):
    body = json.dumps(obj).encode("utf-8")
    return struct.pack(">Q", len(body)) + body


def _error(exc):
    try:
        message = str(exc)
    except Exception:  # a student's exception with a broken __str__
        message = ""
    return {"type": type(exc).__name__, "message": message[:500]}


class _Served:
    def __init__(self, namespace, name):
        self.namespace, self.name = namespace, name

    def load(self, request):
        source = str(request["source"])
        linecache.cache[CELL_FILE] = (len(source), None, source.splitlines(True), CELL_FILE)
        try:
            exec(compile(source, CELL_FILE, "exec"), self.namespace)
        except BaseException as exc:  # noqa: B036 (SystemExit, KeyboardInterrupt from the cell too)
            if self.name not in self.namespace:
                return {"ok": False, "error": _error(exc)}
        if self.name not in self.namespace:
            return {"ok": True, "state": "missing"}
        value = self.namespace[self.name]
        state = "none" if value is None else "ellipsis" if value is Ellipsis else "value"
        try:
            text = repr(value)[:200]
        except Exception:
            text = f"<{type(value).__name__}>"
        return {"ok": True, "state": state, "callable": callable(value),
                "type": type(value).__name__, "repr": text}

    def call(self, request, values):
        fn = self.namespace[self.name]
        args = [values.decode(a) for a in request.get("args", [])]
        kwargs = {k: values.decode(v) for k, v in request.get("kwargs", {}).items()}
        if request.get("helper"):
            result = package_object(request["helper"])(fn, *args, **kwargs)
        else:
            result = fn(*args, **kwargs)
        return {"ok": True, "value": values.encode(result)}


def main():
    serve(*private_channel())


def private_channel(read_fd=0, write_fd=1):
    """(input, output, /dev/null): the frame channel on descriptors of its own, with 0 and 1
    pointed at /dev/null, so that what else the process prints cannot mix with it."""
    inp = os.fdopen(os.dup(read_fd), "rb", buffering=0)
    out = os.fdopen(os.dup(write_fd), "wb", buffering=0)
    return inp, out, _quiet_stdio()


def _quiet_stdio():
    """Point 0 and 1 at /dev/null; its descriptor."""
    quiet = os.open(os.devnull, os.O_RDWR)
    os.dup2(quiet, 0)
    os.dup2(quiet, 1)
    return quiet


def serve(inp, out, quiet):
    """Load the cell of the first request, then answer calls until another op or the end."""
    request = read_frame(inp)
    from . import values
    namespace = {"__name__": "__main__"}
    exec(compile(PREAMBLE, "<preamble>", "exec"), namespace)
    namespace["check"] = lambda *args, **kwargs: None
    served = _Served(namespace, str(request["name"]))
    os.dup2(quiet, 2)           # from here on the student's code runs: its output goes nowhere
    out.write(frame(served.load(request)))
    while True:
        request = read_frame(inp)
        if request is None or request.get("op") != "call":
            return
        try:
            reply = served.call(request, values)
        except BaseException as exc:  # noqa: B036 the student's code may raise anything
            reply = {"ok": False, "error": _error(exc)}
        try:
            out.write(frame(reply))
        except (TypeError, ValueError) as exc:
            out.write(frame({"ok": False, "error": _error(exc)}))


if __name__ == "__main__":
    sys.exit(main())
