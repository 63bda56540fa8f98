"""The part of a kernel lab's cell that is the kernel: what a graded run executes.

:func:`kernel_cell` keeps the ``@cuda.jit`` functions (decorator arguments constant, parameters
without defaults or annotations: nothing runs at definition time), constants computed from
numbers (``TILE = 16``, ``BM = BN = 32``, ``float32(0)``, ``math.ceil(...)``) and imports of
math, numpy and numba, and blanks every other line (a ``check(...)``, a test launch, a ``print``)
so that line numbers still match the cell. What it keeps is compiled for a GPU
(:mod:`gemmlab.labs.compile`) before the simulator runs it: CUDA, with no way to reach Python.
"""
import ast

ALLOWED_IMPORTS = ("math", "numpy", "numba")
CONSTANT_CALLS = ("int", "float", "min", "max", "abs", "round", "float16", "float32", "float64",
                  "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
CONSTANT_MODULES = ("math", "np", "numpy", "numba")
PREAMBLE_NAMES = {"math", "np", "cuda", "float32", "int32"}     # what nvcompile.PREAMBLE defines
KEPT = ("the @cuda.jit functions, constants computed from numbers and imports of math, numpy "
        "and numba")


def _is_jit(decorator):
    """``@cuda.jit``, ``@cuda.jit(...)`` with constant arguments, ``@numba.cuda.jit``."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    if not (isinstance(target, ast.Attribute) and target.attr == "jit"):
        return False
    base = target.value
    if not ((isinstance(base, ast.Name) and base.id == "cuda")
            or (isinstance(base, ast.Attribute) and base.attr == "cuda"
                and isinstance(base.value, ast.Name) and base.value.id == "numba")):
        return False
    if isinstance(decorator, ast.Call):
        values = list(decorator.args) + [k.value for k in decorator.keywords]
        return all(k.arg is not None for k in decorator.keywords) and all(
            isinstance(v, ast.Constant) for v in values)
    return True


def _constant(node, names):
    """Whether ``node`` is arithmetic on numbers and on the constants ``names``."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float)) or node.value is None    # bool is an int
    if isinstance(node, ast.Name):
        return node.id in names
    if isinstance(node, ast.Attribute):
        return (isinstance(node.value, ast.Name) and node.value.id in CONSTANT_MODULES
                and not node.attr.startswith("_"))
    if isinstance(node, ast.BinOp):
        return _constant(node.left, names) and _constant(node.right, names)
    if isinstance(node, ast.UnaryOp):
        return _constant(node.operand, names)
    if isinstance(node, ast.Tuple):
        return all(_constant(e, names) for e in node.elts)
    if isinstance(node, ast.Call):
        func = node.func
        callable_ok = ((isinstance(func, ast.Name) and func.id in CONSTANT_CALLS)
                       or (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                           and func.value.id in CONSTANT_MODULES
                           and (func.value.id == "math" or func.attr in CONSTANT_CALLS)))
        return callable_ok and not node.keywords and all(_constant(a, names) for a in node.args)
    return False


def _kept(node, names):
    if isinstance(node, ast.Import):
        return all(a.name.split(".")[0] in ALLOWED_IMPORTS for a in node.names)
    if isinstance(node, ast.ImportFrom):
        return not node.level and (node.module or "").split(".")[0] in ALLOWED_IMPORTS
    if isinstance(node, ast.FunctionDef):
        args = node.args
        plain = not (args.defaults or args.kw_defaults or node.returns or any(
            a.annotation for a in args.args + args.posonlyargs + args.kwonlyargs))
        return plain and bool(node.decorator_list) and all(map(_is_jit, node.decorator_list))
    if isinstance(node, ast.Assign):
        return (all(isinstance(t, ast.Name) for t in node.targets)
                and _constant(node.value, names))
    return False


def defined(node):
    """The names a kept statement (see :func:`_kept`) defines."""
    if isinstance(node, ast.FunctionDef):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets]
    return [(a.asname or a.name.split(".")[0]) for a in node.names]


def kernel_cell(source, name):
    """(the cell with only the kernel's parts kept, other lines blank; "") or ("", why there is
    no kernel to run: the cell does not parse, or no kept ``@cuda.jit`` function ``name``)."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return "", f"your cell does not parse: {exc.msg} (line {exc.lineno})"
    except (ValueError, RecursionError, MemoryError):
        return "", "your cell could not be read as Python"
    names, spans = set(PREAMBLE_NAMES), []
    for node in tree.body:
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        kept = _kept(node, names)
        if kept:
            names.update(defined(node))
        spans.append((range(first, node.end_lineno + 1), kept))
    dropped = {number for span, kept in spans if not kept for number in span}
    keep = {number for span, kept in spans if kept and dropped.isdisjoint(span) for number in span}
    text = "\n".join(line if number in keep else ""
                     for number, line in enumerate(source.splitlines(), 1))
    found = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name]
    if not any(n.lineno in keep for n in found):
        if found and not found[-1].decorator_list:
            return "", ("expected a @cuda.jit kernel, got a plain Python function: put @cuda.jit "
                        "on the line above `def`")
        why = (f"{name} is defined, but not as a plain @cuda.jit function at the top of the "
               f"cell (no other decorator, no default values)" if found else
               f"your cell defines no function {name}")
        return "", f"{why}: the lab runs only {KEPT} of the cell."
    return text + "\n", ""
