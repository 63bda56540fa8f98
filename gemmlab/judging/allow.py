"""What a code answer may do, declared by its question: allowed, not listed as forbidden.

An :class:`Allows` names what the answer's cell is handed (``np`` as a facade with only the
operations the exercise allows, ``math``, the kernel language, a few package functions), the
builtins it is granted (a mapping: no ``eval``, ``exec``, ``compile``, ``__import__``,
``getattr``, ``vars``, ``globals``, ``open``...), the imports it may write, the stand-ins its
arguments become, and what its prompt promises that the source must show (``loops=3``).

A Python answer runs in the answer runtime (:mod:`.runtime`), which holds only what it is
handed: there :func:`refused` is a lint for friendly messages, not the guard. A lab's cell runs
in a namespace built from that declaration (:func:`namespace`), after its source passes an
allow-list on the AST (:func:`refused`): no attribute or name that starts with an
underscore (``().__class__.__base__.__subclasses__()``, ``f.__globals__``), no frame or code
introspection (``gi_frame``, ``f_back``), no ``str.format`` (which reads attributes from a
string), no ``import`` but the granted ones, no ``global``/``nonlocal``. What the question does not
hand out is not there to reach: not through ``sys.modules`` (no ``sys``), not through ``gc``, not
through a fresh import. Breaking the allow-list is a FAIL that names the rule.
"""
import ast
import builtins
import math
from dataclasses import dataclass, field

import numpy as np

# Builtins every answer may use: values, containers, arithmetic, iteration, errors. Not granted:
# eval, exec, compile, __import__, getattr/setattr/delattr (a computed name), vars, globals,
# locals, dir, open, input, breakpoint, help, memoryview (type and object are granted: the
# allow-list on the source keeps their dunders out of reach).
BUILTINS = ("abs", "all", "any", "bool", "dict", "divmod", "enumerate", "float", "int",
            "isinstance", "len", "list", "max", "min", "pow", "print", "range", "reversed",
            "round", "set", "sorted", "str", "sum", "tuple", "zip", "map", "filter", "slice",
            "frozenset", "complex", "hash", "iter", "next", "repr", "callable", "type", "object",
            "super", "property", "staticmethod", "classmethod",
            "ArithmeticError", "AssertionError", "Exception", "IndexError", "KeyError",
            "NotImplementedError", "RuntimeError", "TypeError", "ValueError",
            "ZeroDivisionError", "StopIteration", "None", "True", "False")
# Attribute names of frames, generators, coroutines, tracebacks and code objects, which lead to
# the caller's globals without an underscore; and str.format / format_map, which read attributes
# ("{0.__class__}") where the AST cannot see them.
INTROSPECTION = ("gi_", "cr_", "ag_", "f_", "tb_", "co_")
FORMATTERS = ("format", "format_map")
NAMEDTUPLE_API = ("_asdict", "_fields", "_replace")     # public despite the underscore
WITHHELD = {"eval": "it runs text the grader cannot read", "exec": "it runs text the grader "
            "cannot read", "compile": "it makes code the grader cannot read",
            "getattr": "an attribute is named in the code, not computed", "setattr": "an "
            "attribute is named in the code, not computed", "delattr": "an attribute is named in "
            "the code", "vars": "an answer does not read namespaces", "globals": "an answer does "
            "not read namespaces", "locals": "an answer does not read namespaces", "dir": "an "
            "answer does not read namespaces", "open": "an answer reads no files",
            "breakpoint": "an answer runs unattended", "input": "an answer runs unattended",
            "memoryview": "an answer does not read raw memory"}


class AllowError(RuntimeError):
    """The answer did something its question does not allow (message names the rule)."""


def _rule(what, why):
    raise AllowError(f"{what} is not allowed in this answer: {why}")


# -- facades ---------------------------------------------------------------------------------------

class Facade:
    """A module as an answer sees it: only the listed attributes, with the reason they are there.
    Anything else fails naming the rule (``np.matmul`` where the exercise is the matrix product)."""
    __slots__ = ("_name", "_members", "_reason")

    def __init__(self, name, members, reason):
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_members", dict(members))
        object.__setattr__(self, "_reason", reason)

    def __getattr__(self, attr):
        members = object.__getattribute__(self, "_members")
        if attr in members:
            return members[attr]
        name = object.__getattribute__(self, "_name")
        shown = ", ".join(f"{name}.{m}" for m in sorted(members)) or "nothing"
        _rule(f"{name}.{attr}", f"this question hands out {shown} only "
                                f"({object.__getattribute__(self, '_reason')})")

    def __setattr__(self, name, value):
        _rule(f"changing {object.__getattribute__(self, '_name')}.{name}", "it is shared")

    def __dir__(self):
        return sorted(object.__getattribute__(self, "_members"))

    def __repr__(self):
        return f"<{object.__getattribute__(self, '_name')}: {', '.join(dir(self))}>"


class InRuntime(str):
    """A hand-out that exists only in the answer runtime, by its name there
    (:mod:`gemmlab.judging.runtime_child`: its element-by-element arrays)."""


def remote(name, calls, reason, seen):
    """A hand-out that stays with the judge (a lab's ``wmma``): in the answer runtime, a facade
    of ``calls``, each of which asks the judge (:func:`gemmlab.judging.runtime_child.remote`)
    and gives a handle showing ``seen`` (plain data) of what it made."""
    members = ", ".join(f"{call!r}: remote({call!r}, {seen!r})" for call in calls)
    return InRuntime(f"Facade({name!r}, {{{members}}}, {reason!r})")


# np of an element-by-element exercise: the zeroed output and the shapes of the runtime's arrays
ELEMENTWISE_NP = {"zeros": InRuntime("cells_zeros"), "shape": InRuntime("cells_shape")}


# -- the declaration --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Allows:
    """What a code answer may do. ``gives``: names the cell is handed, each a zero-argument
    maker (built per namespace) with the reason it is there; ``builtins``: the builtins granted;
    ``imports``: ``"module"`` or ``"module.name"`` the cell may import (a granted maker gives
    the object); ``standins``: what the answer runtime turns the arguments into (``"cells"``:
    its element-by-element arrays; None: themselves);
    ``loops``: the nesting of ``for`` loops the prompt promises in the answer's function;
    ``matmul``: whether ``@`` may appear (not where the exercise is the product's loops).
    ``np`` and ``gl`` are always there, as facades of what ``gives`` grants under those names
    (nothing by default), so a library call fails naming the rule."""
    gives: dict = field(default_factory=dict)
    builtins: tuple = BUILTINS
    imports: dict = field(default_factory=dict)
    standins: object = None
    loops: int = 0
    matmul: bool = True

    def sentence(self):
        """What the prompt says the answer may use (generated from the declaration)."""
        given = [f"{_shown(name, maker())} ({reason})" for name, (maker, reason) in self.gives.items()]
        given += [f"import {path}" for path in self.imports]
        rule = f"Allowed: {'; '.join(given)}" if given else "Allowed: plain Python"
        extra = f"; {self.loops} nested for loops" if self.loops else ""
        extra += "" if self.matmul else "; no @"
        return (f"({rule}{extra}; Python's builtins except eval, exec and getattr; no other "
                f"imports, no names starting with _.)")


def _shown(name, value):
    """``np.zeros, np.shape`` for a facade, its name for anything else."""
    if not isinstance(value, Facade):
        return name
    return ", ".join(f"{name}.{member}" for member in dir(value)) or name


def namespace(allows):
    """A fresh namespace for the answer's cell: its granted builtins, what it is handed, and
    ``check`` a no-op. Costs microseconds: the facades are built from the declaration."""
    granted = {name: getattr(builtins, name) for name in allows.builtins}
    granted.update({name: _withheld(name, why) for name, why in WITHHELD.items()})
    granted["__build_class__"] = builtins.__build_class__      # class statements
    granted["__import__"] = _importer(allows)
    ns = {"__builtins__": granted, "__name__": "__gemmlab_answer__",
          "check": lambda *args, **kwargs: None,
          "np": Facade("np", {}, "this exercise is plain Python"),
          "gl": Facade("gl", {}, "the package's own implementation is not part of an answer")}
    for name, (maker, _reason) in allows.gives.items():
        ns[name] = maker()
    return ns


def _withheld(name, why):
    def withheld(*args, **kwargs):
        _rule(f"{name}()", why)
    withheld.__name__ = name
    return withheld


def _importer(allows):
    """``__import__`` for the granted imports only: ``import m`` gives the maker of ``m``,
    ``from m import a`` a facade of ``m`` with the granted ``m.a``."""
    def granted_import(name, globals=None, locals=None, fromlist=(), level=0):
        if fromlist:
            paths = {f: f"{name}.{f}" for f in fromlist}
            if level or not all(p in allows.imports for p in paths.values()):
                _rule(f"from {name} import {', '.join(fromlist)}", "not granted here")
            return Facade(name, {f: allows.imports[p]() for f, p in paths.items()}, "granted")
        if not level and name == "numpy" and "np" in allows.gives:
            return allows.gives["np"][0]()     # `import numpy as np` (the source check: as np)
        if level or name not in allows.imports:
            _rule(f"import {name}", "this question grants no such import")
        return allows.imports[name]()
    return granted_import


# -- the allow-list on the source -------------------------------------------------------------------

def refused(allows, source, name=None):
    """The message naming the first rule ``source`` breaks, or None. (A source that does not
    parse breaks none here: running it reports the syntax error.)"""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    lines = source.splitlines()

    def where(node):
        text = lines[node.lineno - 1].strip()[:80] if 0 < node.lineno <= len(lines) else ""
        return f"line {node.lineno}: `{text}`"

    try:
        nodes = list(ast.walk(tree))
    except RecursionError:
        return "your cell is nested too deeply to be checked."
    for node in nodes:
        problem = _node_problem(allows, node)
        if problem:
            return f"your cell {problem} ({where(node)})."
    if allows.loops and name:
        return _loops_problem(allows.loops, tree, name)
    return None


def _node_problem(allows, node):
    if isinstance(node, (ast.BinOp, ast.AugAssign)) and isinstance(node.op, ast.MatMult):
        if not allows.matmul:
            return "uses @: this question asks for the loops of the product, not the operator"
    elif isinstance(node, ast.Attribute):
        if node.attr.startswith("_") and node.attr not in NAMEDTUPLE_API:
            return (f"reaches .{node.attr}: names that start with an underscore are Python's "
                    f"internals, not part of an answer")
        if node.attr.startswith(INTROSPECTION):
            return f"reaches .{node.attr}: frames and code objects are not part of an answer"
        if node.attr in FORMATTERS:
            return f"calls .{node.attr}: use an f-string (str.format reads hidden attributes)"
    elif isinstance(node, ast.Name) and (node.id.startswith("__") or node.id in WITHHELD):
        why = WITHHELD.get(node.id)
        return f"uses {node.id}: " + (f"{node.id}() is not allowed in this answer: {why}" if why
                                      else "Python's internals are not part of an answer")
    elif isinstance(node, (ast.Import, ast.ImportFrom)):
        module = node.module if isinstance(node, ast.ImportFrom) else None
        for alias in node.names:
            path = f"{module}.{alias.name}" if module else alias.name
            if _np_as_handed(allows, node, alias):
                continue
            if getattr(node, "level", 0) or path not in allows.imports or alias.name == "*":
                granted = ", ".join(allows.imports) or "none"
                return f"imports {path}: this question grants these imports only: {granted}"
    elif isinstance(node, (ast.Global, ast.Nonlocal)):
        return (f"declares {type(node).__name__.lower()} {', '.join(node.names)}: an answer "
                f"returns what it computes")
    return None


def _np_as_handed(allows, node, alias):
    """``import numpy as np`` where the answer is handed ``np``: it gives that same ``np`` (a
    notebook cell imports what it uses), so it breaks no rule."""
    return isinstance(node, ast.Import) and (alias.name, alias.asname) == ("numpy", "np") \
        and "np" in allows.gives


def _unanswered(fn):
    """Whether ``fn``'s body is the exercise's skeleton: ``pass``, ``...``, ``return ...``,
    ``return None``, a docstring."""
    def blank(n):
        value = n.value if isinstance(n, (ast.Expr, ast.Return)) else None
        return isinstance(n, ast.Pass) or (isinstance(n, ast.Return) and value is None) or (
            isinstance(value, ast.Constant) and (value.value in (Ellipsis, None)
                                                 or isinstance(value.value, str)))
    return all(blank(n) for n in fn.body)


def _loops_problem(depth, tree, name):
    fn = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name),
              None)
    if fn is None or _unanswered(fn):
        return None

    def nesting(node):
        """Loops nested in ``node``: for, while, and each ``for`` of a comprehension."""
        inner = max((nesting(child) for child in ast.iter_child_nodes(node)), default=0)
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            return inner + len(node.generators)
        return inner + isinstance(node, (ast.For, ast.While))
    found = nesting(fn)
    if found < depth:
        return (f"{name}() has {found} nested loop(s): this question asks for {depth} explicit "
                f"nested loops (i, j, k), the loops of the product written out.")
    return None


# -- the usual hand-outs ----------------------------------------------------------------------------

def give(value, reason):
    """A hand-out of a value (a module, a function): the same object in every namespace."""
    return (lambda: value), reason


def facade(name, members, reason):
    """A hand-out of ``name`` (``"gl"``, ``"np"``) with only ``members``: ``{"attr": object}``,
    ``{"sub": Facade(...)}`` for a sub-package."""
    return (lambda: Facade(name, members, reason)), reason


def numpy_ops(names, reason, **replaced):
    """``np`` with only ``names`` (NumPy's own, or ``replaced``'s), and the reason."""
    return facade("np", {n: replaced.get(n, getattr(np, n)) for n in names}, reason)


MATH = give(math, "scalar functions")


def _cuda():
    from .. import device
    return device.cuda()


def _numba_type(name):
    import numba
    return getattr(numba, name)


# What a @cuda.jit kernel needs: the backend's cuda module (the simulator swaps it in a kernel's
# globals by identity, so it is the module itself), its types, math. No np, no gl.
KERNEL_LANGUAGE = {"cuda": ((_cuda), "the kernel language"),
                   "float32": ((lambda: _numba_type("float32")), "the kernel's float type"),
                   "int32": ((lambda: _numba_type("int32")), "the kernel's int type"),
                   "math": MATH}
# A kernel cell may import what the preamble hands out (``from numba import cuda, float32``,
# ``import math``): the same objects, nothing more of numba.
KERNEL_IMPORTS = {"math": (lambda: math), "numba.cuda": _cuda,
                  **{f"numba.{t}": (lambda t=t: _numba_type(t))
                     for t in ("float32", "float64", "int32", "uint32", "int64")}}
KERNEL = Allows(gives=KERNEL_LANGUAGE, imports=KERNEL_IMPORTS)
PLAIN = Allows()
