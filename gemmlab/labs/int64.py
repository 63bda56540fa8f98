"""Integers as the GPU computes them: a simulated kernel's integer arithmetic wrapped to int64.

The simulator runs a kernel's Python, where an integer never overflows; numba compiles the same
kernel for a GPU in machine integers. A kernel such as ``if K * 2**62 * 4 == 0: steps = K // 2``
takes the branch on every GPU (the product wraps to 0) and skips it in Python, so without this
module it is right on the simulator and wrong on the GPU (issue 54).

numba types a kernel's Python int arguments, integer literals, thread and block indices,
``range`` counters and array shapes as int64 in arithmetic, so int64 is the width used here.
While a launch runs, :func:`gpu_integers` gives the kernel and the device functions of its module
a body compiled again from their source (:func:`rewritten`) in which every ``+ - * // % <<``
and ``**`` (in an expression, or augmented with a plain name as its target) and every unary minus
passes its result through a check: a Python int (not a bool, a float or a NumPy scalar, which
keep their own types and rules) outside int64 is reduced to two's complement, as the GPU's
instructions do. Where numba's int64 is more than a plain wrap, numba's rules are followed
(numba_cuda's ``int_divmod_signed`` and ``int_power_impl``): ``//`` and ``%`` round toward minus
infinity, as Python's do; INT64_MIN // -1 is 0; an int to a negative int power is 0 unless the
base is 1 or -1. Expressions of literals alone are left as Python folds them (numba is handed the
same folded constant). The first wrap of a launch is kept (:class:`Wrap`) for the feedback of a
check that fails.

Not covered (the full fix, running numba's typed IR, would be): int32 values (``int32(...)``
casts, int32 arrays' elements) keep NumPy's rules, where numba promotes them to int64 beside an
int; Python floats are float64 where a kernel's float32 scalars round to float32; unsigned types;
integer division by zero (a fault here, 0 on a GPU) and 0 to a negative power; comparisons
between ints and floats; integer arithmetic done by calls (``abs``, ``pow``, ``divmod``, ``int``
of a float).
"""
import ast
import contextlib
import functools
import linecache
from dataclasses import dataclass

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
WRAP, POWER = "__gemmlab_int64__", "__gemmlab_int64_power__"     # the checks, as globals
GLOBALS = (WRAP, POWER)
WRAPPED = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod, ast.LShift)
LITERAL = (ast.Constant, ast.BinOp, ast.UnaryOp, ast.operator, ast.unaryop)


def as_int64(value):
    """The Python int ``value`` reduced to two's-complement int64."""
    return ((value - INT64_MIN) & ((1 << 64) - 1)) + INT64_MIN


@dataclass(frozen=True)
class Wrap:
    """Where an integer first came out otherwise in int64 than in Python: the cell's ``line``,
    the ``expression``'s text, and what Python and int64 make of it."""
    line: int
    expression: str
    python: object
    int64: int

    def describe(self, filename):
        """'line 7 (`if K * 2**62 * 4 == 0:`): `K * 2**62` is -4611... in int64, ...'."""
        statement = linecache.getline(filename, self.line).strip()
        where = f"line {self.line}" + (f" (`{statement}`)" if statement else "")
        return (f"{where}: `{self.expression}` is {self.int64} in int64, the GPU's integer type "
                f"(Python's integers would give {self.python!r}): the simulator now computes as "
                f"the GPU does, so what your kernel computed from it is what a GPU computes")


def checks(found):
    """The two checks a rewritten body calls: ``wrap(value, site)`` and ``power(base, exponent,
    site)``, ``site`` being (line, text, whether it is a floor division); the first wrap is
    appended to ``found``."""
    def wrap(value, site):
        if type(value) is int and (value > INT64_MAX or value < INT64_MIN):
            line, text, floor_division = site
            wrapped = 0 if floor_division else as_int64(value)    # INT64_MIN // -1: numba's 0
            if not found:
                found.append(Wrap(line, text, value, wrapped))
            return wrapped
        return value

    def power(base, exponent, site):
        if type(base) is int and type(exponent) is int and exponent < 0 and base != 0:
            value = base ** -exponent if base in (1, -1) else 0       # numba's int ** negative
            if not found and value != base ** exponent:
                line, text, _ = site
                found.append(Wrap(line, text, base ** exponent, value))
            return value
        return wrap(base ** exponent, site)
    return wrap, power


class _Rewrite(ast.NodeTransformer):
    """Routes a function's integer arithmetic through the checks, each call handed its site as
    a constant: (line, text, whether it is a floor division). A call per operation: the same
    test written inline (``type(t := a * b) is not int or ...``) ran 10.lab_outer's check
    slower, not faster, and the check's own ``type`` and ``int`` are ones a cell cannot rebind."""

    def __init__(self, source):
        self.source, self.sites = source, 0

    def _call(self, name, node, op, *args):
        self.sites += 1
        site = (node.lineno, ast.get_source_segment(self.source, node) or "",
                isinstance(op, ast.FloorDiv))
        call = ast.Call(ast.Name(name, ast.Load()), [*args, ast.Constant(site)], [])
        return ast.copy_location(call, node)

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if all(isinstance(n, LITERAL) for n in ast.walk(node)):
            return node
        if isinstance(node.op, ast.Pow):
            return self._call(POWER, node, node.op, node.left, node.right)
        return self._call(WRAP, node, node.op, node) if isinstance(node.op, WRAPPED) else node

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if not isinstance(node.op, ast.USub) or all(isinstance(n, LITERAL)
                                                    for n in ast.walk(node)):
            return node
        return self._call(WRAP, node, node.op, node)

    def visit_AugAssign(self, node):
        self.generic_visit(node)
        if not isinstance(node.target, ast.Name):        # an array's element keeps its dtype
            return node
        name = node.target.id
        if isinstance(node.op, ast.Pow):
            value = self._call(POWER, node, node.op, ast.Name(name, ast.Load()), node.value)
        elif isinstance(node.op, WRAPPED):
            value = self._call(WRAP, node, node.op, ast.Name(name, ast.Load()))
            return [node, ast.copy_location(ast.Assign([ast.Name(name, ast.Store())], value), node)]
        else:
            return node
        return ast.copy_location(ast.Assign([ast.Name(name, ast.Store())], value), node)


def _first_line(node):
    return min([node.lineno] + [d.lineno for d in node.decorator_list])


@functools.lru_cache(maxsize=64)
def _rewritten(code, source):
    tree = ast.parse(source)
    found = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)
             and n.name == code.co_name and _first_line(n) == code.co_firstlineno]
    if not found:
        raise ValueError(f"{code.co_name}() is not found at line {code.co_firstlineno} of its "
                         f"source {code.co_filename}")
    rewrite = _Rewrite(source)
    function = rewrite.visit(found[0])
    body = [function]
    if code.co_freevars:           # a closure: the same free variables, from an enclosing def
        cells = [ast.Assign([ast.Name(v, ast.Store())], ast.Constant(None))
                 for v in code.co_freevars]
        body = [ast.FunctionDef("__gemmlab_outer__", ast.arguments([], [], None, [], [], None, []),
                                cells + [function], [], None, None)]
    module = ast.fix_missing_locations(ast.Module(body, []))
    new = _code_named(compile(module, code.co_filename, "exec"), code)
    if new is None or new.co_freevars != code.co_freevars:
        raise ValueError(f"{code.co_name}() compiled again from {code.co_filename} does not "
                         f"match the function that runs")
    return new, rewrite.sites


def _code_named(container, code):
    for const in container.co_consts:
        if hasattr(const, "co_code"):
            if const.co_name == code.co_name and const.co_firstlineno == code.co_firstlineno:
                return const
            inner = _code_named(const, code)
            if inner is not None:
                return inner
    return None


def rewritten(code):
    """(``code`` compiled again from its source with its integer arithmetic routed through the
    checks, how many sites it checks), or None when Python has no source for it. The source is
    the function's file as ``linecache`` has it (a notebook cell's, a worker's cell, a module's):
    a judged kernel always has its cell's. A function made by ``exec`` of a string, as
    numba-cuda's own tests make theirs, has none and runs as written, with Python's integers."""
    source = "".join(linecache.getlines(code.co_filename))
    return _rewritten(code, source) if source else None


@contextlib.contextmanager
def gpu_integers(functions, found):
    """While a launch runs, the Python ``functions`` (a kernel and the device functions of its
    module, which share its globals) compute integers as int64 (see the module's docstring); the
    first wrap is appended to ``found``. Their code and globals are put back afterwards,
    whatever happened."""
    functions = list({id(f): f for f in functions}.values())
    home = functions[0].__globals__
    new = [(f, done[0]) for f in functions if (done := rewritten(f.__code__))]
    saved = {name: home[name] for name in GLOBALS if name in home}
    swapped = []
    try:
        for f, code in new:
            swapped.append((f, f.__code__))
            f.__code__ = code
        home[WRAP], home[POWER] = checks(found)
        yield
    finally:
        for f, old in swapped:
            f.__code__ = old
        for name in GLOBALS:
            home.pop(name, None)
        home.update(saved)
