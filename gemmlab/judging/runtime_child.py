"""The answer runtime, the untrusted end of a Python answer's judging (:mod:`.runtime` is the
judge's): the judge sends this file's TEXT to ``python -I -S -c``, in an empty folder. It uses
the standard library only, plus NumPy where granted; gemmlab is neither on its path nor mounted.
The code worker's protocol (:mod:`.worker`): ``{"op": "load", "source", "name", "numpy",
"setup", "cells"}`` (``setup``: source text that builds the hand-outs, ``HANDOUTS``, from the
stand-ins below), then ``{"op": "call", "args", "kwargs"}``. Before the cell runs, the process
loses the right to open any file (RLIMIT_NOFILE 0): no reading, no importing what is not loaded.
"""
import base64
import json
import os
import struct
import sys

try:
    # POSIX only: Windows has no resource module (ImportError, below)
    import resource
except ImportError:         # Windows: no rlimits (there check() is the student's own machine)
    resource = None


def _read(stream, n):
    data = b""
    while len(data) < n:
        chunk = stream.read(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def read_frame(stream):
    head = _read(stream, 8)
    body = None if head is None else _read(stream, struct.unpack(">Q", head)[0])
    return None if body is None else json.loads(body)


def write_frame(stream, obj):
    data = json.dumps(obj).encode("utf-8")
    stream.write(struct.pack(">Q", len(data)) + data)


class AllowError(RuntimeError):
    """What the answer did is not what its question hands out (the message names the rule)."""


class Facade:
    """A module as the answer is handed it: only the listed members; others fail naming them."""

    def __init__(self, name, members, reason):
        self.name, self.members, self.reason = name, dict(members), reason

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)      # Python's protocols (copy, hasattr) ask for these
        if attr in self.members:
            return self.members[attr]
        shown = ", ".join(f"{self.name}.{m}" for m in sorted(self.members)) or "nothing"
        raise AllowError(f"{self.name}.{attr} is not allowed in this answer: this question hands "
                         f"out {shown} only ({self.reason})")


class Cells:
    """An array of plain floats read and written one element at a time (and ``.shape``)."""
    RULE = "this exercise works one element at a time (read A[i, k], write C[i, j], A.shape)"

    def __init__(self, rows):
        self.rows = rows
        self.shape = (len(rows),) + ((len(rows[0]),) if rows and isinstance(rows[0], list)
                                     else ())

    def _key(self, key):
        key = key if isinstance(key, tuple) else (key,)
        if not all(type(k) is int for k in key) or len(key) > len(self.shape):
            raise AllowError(f"indexing with {key!r} is not allowed in this answer: {self.RULE}")
        return key

    def __getitem__(self, key):
        key = self._key(key)
        value = self.rows[key[0]]
        if len(key) == 2:
            value = value[key[1]]
        return Cells(value) if isinstance(value, list) else value

    def __setitem__(self, key, value):
        key = self._key(key)
        if len(key) != len(self.shape) or type(value) not in (int, float):
            raise AllowError(f"this assignment is not allowed in this answer: {self.RULE}: one "
                             f"number into one element")
        row = self.rows if len(key) == 1 else self.rows[key[0]]
        row[key[-1]] = float(value)

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise AllowError(f"{attr!r} on an array is not allowed in this answer: {self.RULE}")

    def __len__(self):
        return self.shape[0]

    def __iter__(self):
        raise AllowError(f"iterating over an array is not allowed in this answer: {self.RULE}")


def cells_zeros(shape, dtype=None):
    rows, cols = (shape, None) if isinstance(shape, int) else (shape + (None,))[:2]
    return Cells([0.0] * rows if cols is None else [[0.0] * cols for _ in range(rows)])


def decode(data, cells):
    tag, v = data["t"], data.get("v")
    if tag in ("none", "ellipsis"):
        return None if tag == "none" else Ellipsis
    if tag in ("bool", "str"):
        return v
    if tag in ("int", "float"):
        return int(v) if tag == "int" else float(v)
    if tag in ("list", "tuple"):
        items = [decode(x, cells) for x in v]
        return items if tag == "list" else tuple(items)
    if tag == "dict":
        return {k: decode(x, cells) for k, x in v}
    if tag in ("array", "scalar"):
        raw = base64.b64decode(data["b64"])
        numpy = sys.modules.get("numpy")
        if numpy is not None and not cells:
            value = numpy.frombuffer(raw, dtype=data["dtype"]).reshape(data["shape"]).copy()
            return value if tag == "array" else value.reshape(())[()]
        # no NumPy here: the element-by-element arrays (1-D or 2-D) of plain floats
        flat = [float(x) for x in memoryview(raw).cast({"<f8": "d", "<f4": "f", "<i8": "q",
                                                        "<i4": "i"}[data["dtype"]])]
        if tag == "scalar" or len(data["shape"]) < 2:
            return flat[0] if tag == "scalar" else Cells(flat)
        rows, cols = data["shape"]
        return Cells([flat[i * cols:(i + 1) * cols] for i in range(rows)])
    raise ValueError(f"a value this runtime does not carry: {tag}")


def encode(value, depth=0):
    if depth > 32:
        return opaque(value)
    if value is None or value is Ellipsis:
        return {"t": "none" if value is None else "ellipsis"}
    kind = type(value)
    if kind in (bool, str):
        return {"t": kind.__name__, "v": value}
    if kind in (int, float):
        return {"t": kind.__name__, "v": str(value) if kind is int else repr(value)}
    if kind in (list, tuple):
        return {"t": kind.__name__, "v": [encode(x, depth + 1) for x in value]}
    if kind is dict and all(type(k) is str for k in value):
        return {"t": "dict", "v": [[k, encode(x, depth + 1)] for k, x in value.items()]}
    if kind is Cells:
        return encode(value.rows, depth + 1)
    numpy = sys.modules.get("numpy")
    if numpy is not None and (kind is numpy.ndarray or isinstance(value, numpy.generic)) \
            and value.dtype.kind in "biufc":
        data = numpy.ascontiguousarray(value)
        return {"t": "array" if kind is numpy.ndarray else "scalar", "dtype": data.dtype.str,
                "shape": list(data.shape), "b64": base64.b64encode(data.tobytes()).decode()}
    return opaque(value)


def opaque(value):
    try:
        text = repr(value)[:200]
    except Exception:       # a student's __repr__ may raise
        text = f"<{type(value).__name__}>"
    return {"t": "opaque", "type": type(value).__name__, "repr": text}


def error(exc):
    try:
        message = str(exc)[:500]
    except Exception:       # a student's exception with a broken __str__
        message = ""
    return {"type": type(exc).__name__, "message": message}


def handouts(request):
    """The hand-outs its setup text builds (NumPy first where granted, from a folder of links)."""
    if request.get("numpy"):
        os.mkdir("lib")
        for name in ("numpy", "numpy.libs") if os.name == "posix" else ():  # Windows: no links
            if os.path.isdir(os.path.join(request["numpy"], name)):
                os.symlink(os.path.join(request["numpy"], name), os.path.join("lib", name))
        sys.path.insert(0, os.path.abspath("lib") if os.name == "posix" else request["numpy"])
        import numpy  # noqa: F401 (loaded before no file can be opened)
    scope = {"Facade": Facade, "Cells": Cells, "cells_zeros": cells_zeros,
             "cells_shape": lambda a: tuple(a.shape)}
    exec(compile(request["setup"], "<hand-outs>", "exec"), scope)
    return scope["HANDOUTS"]


def load(request, quiet):
    """Run the cell with its hand-outs; the load reply of the worker's protocol."""
    name, source = str(request["name"]), str(request["source"])
    namespace = {"__name__": "__main__", "__builtins__": __builtins__}
    exec("def check(*args, **kwargs):\n    return None\n", namespace)
    namespace.update(handouts(request))
    os.dup2(quiet, 2)
    if resource is not None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (0, 0))  # from here, no file can be opened
    return namespace, loaded(namespace, name, source)


def loaded(namespace, name, source, filename="<your cell>"):
    """Run the cell ``source`` in ``namespace``; the load reply (the code worker's too)."""
    try:
        exec(compile(source, filename, "exec"), namespace)
    except BaseException as exc:  # noqa: B036 (SystemExit, KeyboardInterrupt from the cell too)
        if name not in namespace:
            return {"ok": False, "error": error(exc)}
    if name not in namespace:
        return {"ok": True, "state": "missing"}
    value = namespace[name]
    return {"ok": True, "callable": callable(value), "type": type(value).__name__,
            "repr": opaque(value)["repr"],
            "state": "none" if value is None else "ellipsis" if value is Ellipsis else "value"}


def pipes():
    """(the judge's requests, the replies, a /dev/null fd): fds 0 and 1 moved aside and pointed
    at /dev/null, so that what the answer prints never mixes with the replies."""
    inp = os.fdopen(os.dup(0), "rb", buffering=0)
    out = os.fdopen(os.dup(1), "wb", buffering=0)
    quiet = os.open(os.devnull, os.O_RDWR)
    os.dup2(quiet, 0)
    os.dup2(quiet, 1)
    return inp, out, quiet


def main():
    inp, out, quiet = pipes()
    request = read_frame(inp)
    cells = bool(request.get("cells"))
    namespace, reply = load(request, quiet)
    write_frame(out, reply)
    fn = namespace.get(str(request["name"]))

    def call(request):
        args = [decode(a, cells) for a in request.get("args", [])]
        return encode(fn(*args, **{k: decode(v, cells) for k, v in request.get("kwargs", {}).items()}))
    serve(inp, out, call)


def serve(inp, out, call):
    """Reply to each call request with ``call(request)`` (the result as data) or the error it
    raised, until another op or the end. The code worker serves the same way."""
    while True:
        request = read_frame(inp)
        if request is None or request.get("op") != "call":
            return
        try:
            reply = {"ok": True, "value": call(request)}
        except BaseException as exc:  # noqa: B036 the student's code may raise anything
            reply = {"ok": False, "error": error(exc)}
        try:
            write_frame(out, reply)
        except (TypeError, ValueError, RecursionError) as exc:
            write_frame(out, {"ok": False, "error": error(exc)})

if __name__ == "__main__":
    main()
