"""Values as data: how a value crosses between processes without trusting the other side.

``encode(value)`` turns a value into JSON-ready data and ``decode(data)`` turns that back, with
limits (size, depth, dtypes) and no pickle: a value from a student's process can only become
numbers, bools, strings, None, Ellipsis, tuples, lists, dicts with string keys and NumPy arrays or
scalars of a numeric dtype. Anything else travels as a *stand-in*: an object of a class named like
the student's type, showing its ``repr``, that no answer kind accepts (so the verdict says
"expected a number, got set {1, 2}" just as ``check()`` does). The grader's answers, the code
worker's calls and the labs' observations all travel this way.
"""
import base64

import numpy as np

MAX_ARRAY_BYTES = 16 << 20        # one array (or string) larger than this is not collected
MAX_TOTAL_BYTES = 64 << 20        # one value in all (a call's argument or result)
MAX_DEPTH = 32
MAX_ITEMS = 1_000_000             # elements of all containers of one value together
_NUMERIC = set("biufc")           # bool, signed/unsigned int, float, complex dtypes
_NUMPY_SCALARS = set(np.sctypeDict.values())


class DecodeError(ValueError):
    """Data that ``decode`` refuses: malformed, over a limit, or of a type it does not carry."""


class StandIn:
    """What a value that cannot travel becomes: a class named after the student's type, its repr."""
    def __init__(self, text):
        self._text = text

    def __repr__(self):
        return self._text


def _stand_in(type_name, text):
    name = "".join(c for c in str(type_name) if c.isalnum() or c == "_")[:40] or "object"
    if not name.isidentifier():
        name = "object_" + name
    return type(name, (StandIn,), {})(str(text)[:200])


class Budget:
    """What is left of the bytes and items a set of decoded values may take together."""

    def __init__(self, nbytes=MAX_TOTAL_BYTES, items=MAX_ITEMS):
        self.nbytes, self.items = nbytes, items

    def spend(self, nbytes=0, items=1):
        """Take ``nbytes`` and ``items`` if what is left covers them; whether it did."""
        if nbytes > self.nbytes or items > self.items:
            return False
        self.nbytes -= nbytes
        self.items -= items
        return True


def opaque(value, why=""):
    try:
        text = repr(value)
    except Exception:  # a student's __repr__ may raise
        text = f"<{type(value).__name__}>"
    if len(text) > 200:
        text = text[:197] + "..."
    return {"t": "opaque", "type": type(value).__name__, "repr": text + why}


def encode(value, budget=None, depth=0):
    """JSON-ready data for ``value`` (see the module's docstring for what travels as itself)."""
    budget = budget if budget is not None else Budget()
    if depth > MAX_DEPTH or not budget.spend():
        return opaque(value, " (too deeply nested or too many items to collect)")
    if value is None:
        return {"t": "none"}
    if value is Ellipsis:
        return {"t": "ellipsis"}
    if isinstance(value, bool):
        return {"t": "bool", "v": value}
    if type(value) is int:
        if value.bit_length() > 4096:
            return opaque(value, " (too large to collect)")
        return {"t": "int", "v": str(value)}
    if type(value) is float:
        return {"t": "float", "v": repr(value)}
    if type(value) is complex:
        return {"t": "complex", "v": [repr(value.real), repr(value.imag)]}
    if type(value) is str:
        if not budget.spend(len(value.encode("utf-8", "replace")), 0) or len(value) > MAX_ARRAY_BYTES:
            return opaque(value[:60], " (a string too long to collect)")
        return {"t": "str", "v": value}
    if type(value) in (list, tuple):
        return {"t": type(value).__name__,
                "v": [encode(v, budget, depth + 1) for v in value]}
    if type(value) is dict and all(type(k) is str for k in value):
        return {"t": "dict", "v": [[k, encode(v, budget, depth + 1)] for k, v in value.items()]}
    if type(value) is np.ndarray or type(value) in _NUMPY_SCALARS:
        return _encode_numpy(value, budget)
    return opaque(value)


def _encode_numpy(value, budget):
    dtype = value.dtype
    if dtype.kind not in _NUMERIC or dtype.fields is not None:
        return opaque(value, f" (dtype {dtype}: only numeric arrays are collected; convert it "
                              f"with .astype(np.float64))")
    if value.nbytes > MAX_ARRAY_BYTES or not budget.spend(value.nbytes, 0):
        return {"t": "opaque", "type": type(value).__name__,
                "repr": f"array of shape {value.shape} and dtype {dtype} ({value.nbytes} bytes: "
                        f"larger than the {min(MAX_ARRAY_BYTES, budget.nbytes) >> 10} KiB left "
                        f"to collect)"}
    data = np.ascontiguousarray(value)
    return {"t": "array" if isinstance(value, np.ndarray) else "scalar", "dtype": dtype.str,
            "shape": list(data.shape), "b64": base64.b64encode(data.tobytes()).decode("ascii")}


def decode(data, budget=None, depth=0):
    """The value ``data`` (from :func:`encode`, possibly forged) stands for; DecodeError if not."""
    budget = budget if budget is not None else Budget()
    if depth > MAX_DEPTH + 1 or not budget.spend():
        raise DecodeError("too deeply nested or too many items")
    if not isinstance(data, dict) or not isinstance(data.get("t"), str):
        raise DecodeError(f"not an encoded value: {str(data)[:80]}")
    tag, v = data["t"], data.get("v")
    try:
        if tag == "none":
            return None
        if tag == "ellipsis":
            return Ellipsis
        if tag == "bool" and isinstance(v, bool):
            return v
        if tag == "int" and isinstance(v, str) and len(v) <= 1300:
            return int(v)
        if tag == "float" and isinstance(v, str) and len(v) <= 40:
            return float(v)
        if tag == "complex" and isinstance(v, list) and len(v) == 2:
            return complex(float(v[0][:40]), float(v[1][:40]))
        if tag == "str" and isinstance(v, str) and len(v) <= MAX_ARRAY_BYTES:
            return v
        if tag in ("list", "tuple") and isinstance(v, list):
            items = [decode(x, budget, depth + 1) for x in v]
            return items if tag == "list" else tuple(items)
        if tag == "dict" and isinstance(v, list):
            out = {}
            for pair in v:
                if not (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str)):
                    raise DecodeError("a dict entry is not a [string, value] pair")
                out[pair[0]] = decode(pair[1], budget, depth + 1)
            return out
        if tag in ("array", "scalar"):
            return _decode_numpy(data, budget)
        if tag == "opaque":
            return _stand_in(data.get("type", "object"), data.get("repr", ""))
    except (TypeError, ValueError, OverflowError, AttributeError) as exc:
        raise DecodeError(f"bad {tag!r} value: {exc}") from None
    raise DecodeError(f"unknown or malformed value of tag {tag!r}")


def _decode_numpy(data, budget):
    dtype = np.dtype(str(data["dtype"])[:8])
    shape = data["shape"]
    if dtype.kind not in _NUMERIC or dtype.fields is not None or not isinstance(shape, list) \
            or not all(type(n) is int and n >= 0 for n in shape) or len(shape) > 32:
        raise DecodeError(f"bad array: dtype {dtype}, shape {str(shape)[:40]}")
    raw = base64.b64decode(str(data["b64"]), validate=True)
    count = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if len(raw) > MAX_ARRAY_BYTES or len(raw) != count * dtype.itemsize \
            or not budget.spend(len(raw), 0):
        raise DecodeError(f"array data of {len(raw)} bytes does not fit shape {shape} of {dtype}")
    array = np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
    return array if data["t"] == "array" else array.reshape(())[()]
