"""The untrusted end of :func:`gemmlab_grader.isolate.judge_code`: a fresh Python that runs one
student cell and then serves calls to the function it defines. It never sees a reference answer:
the judging (cases, references, comparisons) stays in the calling process.

Protocol, on the process's stdin/stdout (which are then pointed at /dev/null, so that the student's
prints cannot mix with it): frames of an 8-byte big-endian length and a JSON object.

* ``{"op": "load", "source": cell text, "name": name}`` runs the course's preamble
  (:data:`gemmlab.judging.source.PREAMBLE`), then the cell with
  ``check`` a no-op; replies ``{"ok": true, "state": "missing"|"none"|"ellipsis"|"value",
  "callable": bool, "type": name, "repr": text}``, or ``{"ok": false, "error": {...}}`` when the
  cell raised before defining ``name``.
* ``{"op": "call", "args": [...], "kwargs": {...}}`` calls it; ``"launch": [grid, block]`` launches
  it as a CUDA kernel (``fn[grid, block](*args)``); ``"helper": "gemmlab.module:function"`` calls
  ``function(fn, *args, **kwargs)`` instead (a run helper of the package: instrumented simulator,
  simulated ranks; see :func:`gemmlab.judging.where.where_it_lives`). Replies ``{"ok": true,
  "value": encoded, "args": [encoded array or null]}`` (array arguments as the call left them)
  or ``{"ok": false, "error": {"type", "message"}}``.
* ``{"op": "judge", "kind": "gemmlab.module:NAME", "question": {id, prompt, hint, explain,
  answer_name}, "seed": int or null}`` runs that kind's ``coerce`` and ``judge`` here, without the
  question's reference (:func:`gemmlab.judging.beside.judge_without_reference`: kinds that must
  run the code in their own instrumented setting); replies ``{"ok": true, "status",
  "feedback"}``.
"""
import json
import linecache
import os
import struct
import sys

from gemmlab.judging.beside import judge_without_reference
from gemmlab.judging.source import PREAMBLE
from gemmlab.judging.where import package_object

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

    def call(self, request, answers):
        fn = self.namespace[self.name]
        args = [answers.decode(a) for a in request.get("args", [])]
        kwargs = {k: answers.decode(v) for k, v in request.get("kwargs", {}).items()}
        if request.get("helper"):
            result = package_object(request["helper"])(fn, *args, **kwargs)
        elif request.get("launch"):
            grid, block = (answers.decode(c) for c in request["launch"])
            result = fn[grid, block](*args, **kwargs)
        else:
            result = fn(*args, **kwargs)
        import numpy as np
        returned = [answers.encode(a) if type(a) is np.ndarray else None for a in args]
        return {"ok": True, "value": answers.encode(result), "args": returned}


    def judge(self, request):
        """The question kind's own verdict, here, next to the code (kinds that must run it in
        their own instrumented setting: kernels on the simulator, ranks)."""
        status, feedback, _ = judge_without_reference(package_object(request["kind"]),
                                                      request["question"],
                                                      self.namespace[self.name],
                                                      request.get("seed"))
        return {"ok": True, "status": status, "feedback": feedback}


def main():
    inp = os.fdopen(os.dup(0), "rb", buffering=0)
    out = os.fdopen(os.dup(1), "wb", buffering=0)
    quiet = os.open(os.devnull, os.O_RDWR)
    os.dup2(quiet, 0)
    os.dup2(quiet, 1)
    request = read_frame(inp)
    namespace = {"__name__": "__main__"}
    exec(compile(PREAMBLE, "<preamble>", "exec"), namespace)
    from gemmlab_grader import answers
    namespace["check"] = lambda *args, **kwargs: None
    served = _Served(namespace, str(request["name"]))
    os.dup2(quiet, 2)           # from here on the student's code runs: its output goes nowhere
    out.write(frame(served.load(request)))
    while True:
        request = read_frame(inp)
        if request is None or request.get("op") not in ("call", "judge"):
            return
        try:
            reply = served.call(request, answers) if request["op"] == "call" \
                else served.judge(request)
        except BaseException as exc:  # noqa: B036 the student's code may raise anything
            reply = {"ok": False, "error": _error(exc)}
        try:
            out.write(frame(reply))
        except (TypeError, ValueError) as exc:
            out.write(frame({"ok": False, "error": _error(exc)}))


if __name__ == "__main__":
    sys.exit(main())
