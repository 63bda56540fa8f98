"""The untrusted end of judging code (:mod:`gemmlab.judging.cell` is the asking end): a fresh
Python that runs one student cell, then serves calls to the function it defines (``python -m
gemmlab.judging.worker``), never seeing a reference, a seed or a case beyond each call's arguments.

Protocol on stdin/stdout (then /dev/null, so that the student's prints cannot mix with it): frames
(:func:`pack`) of a JSON object.

* ``{"op": "load", "source", "name"}`` runs the preamble (:data:`gemmlab.judging.source.
  PREAMBLE`), then the cell with ``check`` a no-op; replies ``{"ok": true, "state":
  "missing"|"none"|"ellipsis"|"value", "callable", "type", "repr"}``, or ``{"ok": false,
  "error"}`` when the cell raised before defining ``name``.
* ``{"op": "call", "args", "kwargs"}`` calls it; with ``"helper": "gemmlab.module:function"``
  it calls ``function(fn, *args, **kwargs)`` instead (a run helper: the instrumented simulator,
  simulated ranks; :func:`gemmlab.judging.where.where_it_lives`). Replies ``{"ok": true,
  "value"}`` or ``{"ok": false, "error": {"type", "message"}}``. Arguments are the worker's own
  copies: what the code writes into them stays here.

It loads and serves as the answer runtime does (:mod:`.runtime_child`), with the preamble and
the package: it runs the labs' cells, whose run helpers live in gemmlab.
"""
import json
import linecache
import os
import struct
import sys

from .runtime_child import loaded, pipes, serve
from .source import PREAMBLE
from .where import package_object

CELL_FILE = "<your cell>"
MAX_FRAME = 128 << 20


def pack(data):
    """One frame: an 8-byte big-endian length, then ``data`` (bytes)."""
    return struct.pack(">Q", len(data)) + data


def unpack(stream, limit=MAX_FRAME):
    """The bytes of the next frame of ``stream``, None at its end; ValueError if the frame is
    cut or longer than ``limit``."""
    head = _read_exactly(stream, 8)
    if head is None:
        return None
    (size,) = struct.unpack(">Q", head)
    if size > limit:
        raise ValueError(f"a frame of {size} bytes, more than the {limit} allowed")
    body = _read_exactly(stream, size)
    if body is None:
        raise ValueError("the stream ended inside a frame")
    return body


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
    return pack(json.dumps(obj).encode("utf-8"))


def read_frame(stream):
    """One frame's JSON object, or None at the end of the stream; ValueError if malformed."""
    body = unpack(stream)
    try:
        return None if body is None else json.loads(body)
    except RecursionError:
        raise ValueError("a frame nested too deeply") from None


def _load(namespace, name, source):
    linecache.cache[CELL_FILE] = (len(source), None, source.splitlines(True), CELL_FILE)
    return loaded(namespace, name, source, CELL_FILE)


def main():
    """Load the cell of the first request, then answer calls until another op or the end."""
    inp, out, quiet = pipes()
    request = read_frame(inp)
    from . import values
    name = str(request["name"])
    namespace = {"__name__": "__main__"}
    exec(compile(PREAMBLE, "<preamble>", "exec"), namespace)
    namespace["check"] = lambda *args, **kwargs: None
    os.dup2(quiet, 2)           # from here on the student's code runs: its output goes nowhere
    out.write(frame(_load(namespace, name, str(request["source"]))))

    def call(request):
        args = [values.decode(a) for a in request.get("args", [])]
        kwargs = {k: values.decode(v) for k, v in request.get("kwargs", {}).items()}
        fn = namespace[name]
        return values.encode(package_object(request["helper"])(fn, *args, **kwargs)
                             if request.get("helper") else fn(*args, **kwargs))
    serve(inp, out, call)

if __name__ == "__main__":
    sys.exit(main())
