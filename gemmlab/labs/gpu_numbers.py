"""Numbers as the GPU computes them: a simulated kernel's arithmetic in the types numba gives it.

The simulator runs a kernel's Python; numba compiles the same kernel for a GPU with its own
typing rules. Where the two differ, a kernel can be right on the simulator and wrong on every GPU
(issue 54): ``if K * 2**62 * 4 == 0`` (Python's integers never overflow; int64 wraps to 0),
``if x == 0.1`` with ``x`` a float32 (NumPy 2 compares in float32 and says yes; numba compares
in float64 and says no), ``acc = 0.0; acc += a[i]`` (NumPy 2 adds a Python float to a float32 in
float32; numba in float64), ``math.exp(x)`` (Python: float64; numba: float32 for a float32).

While a launch runs, :func:`gpu_arithmetic` gives the kernel and the device functions of its
module a body compiled again from their source (:func:`rewritten`) in which every ``+ - * / //
% <<`` and ``**`` (in an expression, or augmented: ``x += y``, ``out[i] += y``), every
comparison (``< <= > >= == !=``, chained ones too), every unary minus and every call of a
``math`` function or of ``min``, ``max`` or ``abs`` goes through a check that computes it as
numba types it:

- two Python ints (numba's int64): Python's result, reduced to two's complement where it leaves
  int64, as the GPU's instructions do. Where numba's int64 is more than a plain wrap, numba's
  rules are followed (numba_cuda's ``int_divmod_signed`` and ``int_power_impl``): ``//`` and
  ``%`` round toward minus infinity, as Python's do; INT64_MIN // -1 is 0; an int to a negative
  int power is 0 unless the base is 1 or -1; ``/`` converts both to float64 first.
- two values of one floating type (Python floats, or NumPy scalars of one dtype): Python's or
  NumPy's result, which is numba's.
- anything else (float32 with a Python float or int, int32 with int, an int with a float in a
  comparison, ``math.sqrt`` of a float32): numba-cuda's own typing declarations are asked
  (:func:`rule`) which types the operands are converted to and which type comes out, and the
  operation is done in those types: NumPy scalars for float32 and the other small types, Python
  ints (wrapped) for int64, Python floats for float64. The answer is kept per operation and
  operand types. A value numba does not type as a number (a tuple, an array) keeps Python's rules.

Expressions of literals alone are left as Python folds them (numba is handed the same folded
constant). The first wrap of a launch is kept (:class:`Wrap`) for the feedback of a check that
fails.

Not covered (the full fix, running numba's typed IR, would be): a variable whose assignments
meet at a loop or a branch has one type on the GPU (numba unifies them), here the type of the
value it holds; an int32 or unsigned NumPy value beside a Python int out of its range (NumPy 2
raises OverflowError before the check sees the operands: a fault that names it, where numba
widens both to int64); integer division by zero (a fault here, 0 on a GPU); ``& | ^ >>``, which
give the same values in either type.
"""
import ast
import contextlib
import functools
import linecache
import math
import operator
from dataclasses import dataclass
from types import BuiltinFunctionType

import numpy as np

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1
BINARY, ELEMENT, COMPARE, NEGATE, CALL = (
    "__gemmlab_binary__", "__gemmlab_element__", "__gemmlab_compare__", "__gemmlab_negate__",
    "__gemmlab_call__")                                                     # the checks
GLOBALS = (BINARY, ELEMENT, COMPARE, NEGATE, CALL)
OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
             ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
             ast.LShift: operator.lshift, ast.Pow: operator.pow}
COMPARISONS = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
               ast.GtE: operator.ge, ast.Eq: operator.eq, ast.NotEq: operator.ne}
BY_NAME = {f.__name__: f for f in [*OPERATORS.values(), *COMPARISONS.values()]}
ONE_FLOAT_TYPE = frozenset({float, np.float64, np.float32, np.float16})
TYPED_CALLS = frozenset([min, max, abs] + [f for f in vars(math).values() if callable(f)])
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


@functools.cache
def _typing_context():
    """numba's typing declarations of operators (numba's builtins) and numba-cuda's of math
    functions, in a context of their own: 4 ms, where numba-cuda's whole CUDA context takes
    0.8 s, and importable while ``numba.cuda`` is the simulator, as it is where kernels are
    judged."""
    import numba.core.typing.builtins  # noqa: F401  (it declares the operators)
    from numba.core.typing import templates
    from numba.core.typing.context import BaseContext
    from numba.cuda import cudamath

    class Declared(BaseContext):
        def _load_builtins(self):
            self.install_registry(templates.builtin_registry)
            self.install_registry(cudamath.registry)

        def load_additional_registries(self):
            pass
    context = Declared()
    context.refresh()
    return context


def _numba_type(python_type):
    """numba's type of a value of ``python_type`` (a Python int is int64, as numba types an int
    argument, literal, index or counter), or None for what numba does not type as a number."""
    from numba.core import types
    if python_type in (int, float, bool):
        return {int: types.int64, float: types.float64, bool: types.boolean}[python_type]
    if isinstance(python_type, type) and issubclass(python_type, (np.number, np.bool_)):
        from numba.np import numpy_support
        return numpy_support.from_dtype(np.dtype(python_type))
    return None


def _as_python(numba_type):
    """The conversion to a value of ``numba_type`` here: int64 as a Python int, float64 as a
    Python float, boolean as a bool, the others as NumPy scalars of their dtype."""
    name = str(numba_type)
    return {"int64": int, "float64": float, "bool": bool}.get(name) or np.dtype(name).type


@functools.cache
def rule(function, operand_types):
    """(a conversion per operand, the result's conversion) with which numba computes
    ``function`` (an operator or a math function) of values of ``operand_types``, or None where
    numba declares no such operation (Python's rules then)."""
    types = [_numba_type(t) for t in operand_types]
    if None in types:
        return None
    context = _typing_context()         # (outside the try: no silent fall back to NumPy's rules)
    try:
        signature = context.resolve_function_type(function, tuple(types), {})
        result = _as_python(signature.return_type)
        operands = ([_as_python(t) for t in signature.args] if len(signature.args) == len(types)
                    else [_same] * len(types))          # min and max: one tuple of them all
    except Exception:   # numba's TypingError, no signature, a result that is no number: Python's
        return None
    if function is operator.neg or (function is operator.truediv and result is not int):
        operands = [result] * len(operands)     # widened, then negated; ints divide as floats
    return tuple(operands), result


def _same(value):
    return value


def checks(found):
    """The five checks a rewritten body calls, by their global names (see the module); the first
    int64 wrap is appended to ``found``. A binary operation, a comparison or a negation is handed
    Python's (or NumPy's) result and its operands: most operations are of two Python ints or two
    values of one floating type, where that result is numba's, and cost one call; the others are
    done again in numba's types."""
    def wrap(value, site):
        line, text, name = site
        wrapped = 0 if name == "floordiv" else as_int64(value)      # INT64_MIN // -1: numba's 0
        if not found:
            found.append(Wrap(line, text, value, wrapped))
        return wrapped

    def integers(a, b, site):
        """Two Python ints as numba's int64 computes them."""
        name = site[2]
        if name == "pow" and b < 0 and a != 0:
            value = a ** -b if a in (1, -1) else 0                      # numba's int ** negative
            if not found and value != a ** b:
                found.append(Wrap(site[0], site[1], a ** b, value))
            return value
        if name == "truediv":
            return float(a) / float(b)
        value = BY_NAME[name](a, b)
        return value if INT64_MIN <= value <= INT64_MAX else wrap(value, site)

    def typed(function, values, site):
        """``function`` of ``values`` in the types numba computes it in."""
        how = rule(function, tuple(type(v) for v in values))
        if how is None:
            return function(*values)
        operands, result = how
        values = [convert(v) for convert, v in zip(operands, values, strict=True)]
        if result is int and len(values) == 2 and operands == (int, int) and site[2] in BY_NAME:
            return integers(*values, site)
        return result(function(*values))

    def binary(value, a, b, site):
        kind = type(value)
        if kind is int:                 # of two ints (or bools): int64, wrapped where it leaves it
            return value if INT64_MIN <= value <= INT64_MAX else wrap(value, site)
        if kind is float:               # of Python floats, ints and bools: numba's float64 ...
            return integers(a, b, site) if type(a) is int is type(b) else value  # ... but 2 / 3
        if type(a) is type(b) and kind in ONE_FLOAT_TYPE:
            return value
        return typed(BY_NAME[site[2]], (a, b), site)

    def element(value, a, b, site):
        """``t[k] op= b``, ``a`` being ``t[k]``: numba's result, stored as numba stores it (an
        int64 truncated to a smaller integer element: NumPy would refuse one out of range)."""
        value = binary(value, a, b, site)
        if type(value) is int and isinstance(a, np.integer):
            return np.int64(value).astype(a.dtype)
        return value

    def compare(value, a, b, site):
        return value if type(a) is type(b) else typed(BY_NAME[site[2]], (a, b), site)

    def negate(value, operand, site):
        kind = type(value)
        if kind is int:
            return value if INT64_MIN <= value <= INT64_MAX else wrap(value, site)
        return value if kind in ONE_FLOAT_TYPE else typed(operator.neg, (operand,), site)

    def call(function, site, *args):
        if all(type(a) in (int, float) for a in args) and len({type(a) for a in args}) < 2:
            return function(*args)
        return typed(function, args, site)
    return {BINARY: binary, ELEMENT: element, COMPARE: compare, NEGATE: negate, CALL: call}


class _Rewrite(ast.NodeTransformer):
    """Routes a function's arithmetic, comparisons and math calls through the checks, each call
    handed its site as a constant: (line, text, the operator's name). An operand that is more
    than a name or a constant is kept in a variable of its own (``(__gemmlab_3 := a[i]) * b``)
    so that the check sees it without evaluating it twice. One call per operation: the same test
    written inline ran 10.lab_outer's check slower, not faster, and the checks' own ``type`` and
    ``int`` are ones a cell cannot rebind. ``typed_names``: the names that reach a math function
    (``from math import exp``) or min, max and abs."""

    def __init__(self, source, typed_names):
        self.source, self.typed_names, self.sites = source, typed_names, 0
        self.in_iterable = 0        # a comprehension's iterable, where := is not allowed

    def _site(self, node, operation):
        self.sites += 1
        return ast.Constant((node.lineno, ast.get_source_segment(self.source, node) or "",
                             operation))

    def _kept(self, operand):
        """(the operand as evaluated once, the operand as read again)."""
        if isinstance(operand, (ast.Name, ast.Constant)):
            return operand, operand
        name = f"__gemmlab_{self.sites}_{id(operand)}"
        return (ast.NamedExpr(ast.Name(name, ast.Store()), operand), ast.Name(name, ast.Load()))

    def _check(self, check, node, operation, result, *operands):
        call = ast.Call(ast.Name(check, ast.Load()),
                        [result, *operands, self._site(node, operation)], [])
        return ast.copy_location(call, node)

    def visit_comprehension(self, node):
        node.target = self.visit(node.target)
        self.in_iterable += 1
        node.iter = self.visit(node.iter)
        self.in_iterable -= 1
        node.ifs = [self.visit(test) for test in node.ifs]
        return node

    def visit_BinOp(self, node):
        self.generic_visit(node)
        if type(node.op) not in OPERATORS or _literal(node) or self.in_iterable:
            return node
        (left, left_again), (right, right_again) = self._kept(node.left), self._kept(node.right)
        result = ast.BinOp(left, node.op, right)
        return self._check(BINARY, node, OPERATORS[type(node.op)].__name__, result, left_again,
                           right_again)

    def visit_Compare(self, node):
        """``a < b`` and chains of them: ``lo <= x < hi`` is ``lo <= x and x < hi``, ``x``
        evaluated once, as Python does."""
        self.generic_visit(node)
        if any(type(op) not in COMPARISONS for op in node.ops) or self.in_iterable:
            return node
        kept = [self._kept(operand) for operand in [node.left, *node.comparators]]
        checks = []
        for n, op in enumerate(node.ops):      # the operand on the left was evaluated already
            result = ast.Compare(kept[n][0] if n == 0 else kept[n][1], [op], [kept[n + 1][0]])
            checks.append(self._check(COMPARE, node, COMPARISONS[type(op)].__name__, result,
                                      kept[n][1], kept[n + 1][1]))
        return checks[0] if len(checks) == 1 else ast.copy_location(ast.BoolOp(ast.And(), checks),
                                                                     node)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if not isinstance(node.op, ast.USub) or _literal(node) or self.in_iterable:
            return node
        operand, again = self._kept(node.operand)
        return self._check(NEGATE, node, "neg", ast.UnaryOp(node.op, operand), again)

    def visit_AugAssign(self, node):
        self.generic_visit(node)
        if type(node.op) not in OPERATORS:
            return node
        if isinstance(node.target, ast.Subscript):
            return self._element(node)
        if not isinstance(node.target, ast.Name):
            return node
        target = ast.Name(node.target.id, ast.Load())
        value, again = self._kept(node.value)
        result = ast.BinOp(target, node.op, value)
        check = self._check(BINARY, node, OPERATORS[type(node.op)].__name__, result, target,
                            again)
        return ast.copy_location(ast.Assign([ast.Name(node.target.id, ast.Store())], check), node)

    def _element(self, node):
        """``t[k] op= v`` as ``T = t; K = k; T[K] = element((R := T[K]) op (V := v), R, V)``: the
        same reads, in Python's order, and the check stores numba's result. A slice is left."""
        subscript = node.target
        if any(isinstance(n, ast.Slice) for n in ast.walk(subscript.slice)):
            return node
        key = f"{self.sites}_{id(node)}"
        array, index, read = (f"__gemmlab_{role}_{key}" for role in ("t", "k", "r"))
        value, again = self._kept(node.value)
        current = ast.Subscript(ast.Name(array, ast.Load()), ast.Name(index, ast.Load()),
                                ast.Load())
        result = ast.BinOp(ast.NamedExpr(ast.Name(read, ast.Store()), current), node.op, value)
        check = self._check(ELEMENT, node, OPERATORS[type(node.op)].__name__, result,
                            ast.Name(read, ast.Load()), again)
        store = ast.Subscript(ast.Name(array, ast.Load()), ast.Name(index, ast.Load()),
                              ast.Store())
        return [ast.copy_location(statement, node) for statement in (
            ast.Assign([ast.Name(array, ast.Store())], subscript.value),
            ast.Assign([ast.Name(index, ast.Store())], subscript.slice),
            ast.Assign([store], check))]

    def visit_Call(self, node):
        self.generic_visit(node)
        function = node.func
        typed = (isinstance(function, ast.Attribute) and isinstance(function.value, ast.Name)
                 and function.value.id == "math") or \
            (isinstance(function, ast.Name) and function.id in self.typed_names)
        if not typed or node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
            return node
        call = ast.Call(ast.Name(CALL, ast.Load()), [function, self._site(node, "call"),
                                                     *node.args], [])
        return ast.copy_location(call, node)


def _literal(node):
    return all(isinstance(n, LITERAL) for n in ast.walk(node))


def _first_line(node):
    return min([node.lineno] + [d.lineno for d in node.decorator_list])


@functools.lru_cache(maxsize=64)
def _rewritten(code, source, typed_names):
    tree = ast.parse(source)
    found = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)
             and n.name == code.co_name and _first_line(n) == code.co_firstlineno]
    if not found:
        raise ValueError(f"{code.co_name}() is not found at line {code.co_firstlineno} of its "
                         f"source {code.co_filename}")
    rewrite = _Rewrite(source, typed_names)
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


def typed_names(module_globals):
    """The names that reach min, max, abs or a math function in a module of ``module_globals``:
    its own bindings (``from math import exp``), and the builtins it does not rebind."""
    bound = {name for name, value in module_globals.items()
             if type(value) is BuiltinFunctionType and value in TYPED_CALLS}
    return frozenset(bound | ({"min", "max", "abs"} - set(module_globals)))


def rewritten(code, names=frozenset({"min", "max", "abs"})):
    """(``code`` compiled again from its source with its arithmetic, comparisons and the calls
    of ``names`` and of ``math.*`` routed through the checks, how many sites it checks), or None
    when Python has no source for it. The source is the function's file as ``linecache`` has it
    (a notebook cell's, a worker's cell, a module's): a judged kernel always has its cell's. A
    function made by ``exec`` of a string, as numba-cuda's own tests make theirs, has none and
    runs as written, in Python's types."""
    source = "".join(linecache.getlines(code.co_filename))
    return _rewritten(code, source, names) if source else None


@contextlib.contextmanager
def gpu_arithmetic(functions, found):
    """While a launch runs, the Python ``functions`` (a kernel and the device functions of its
    module, which share its globals) compute in numba's types (see the module's docstring); the
    first int64 wrap is appended to ``found``. Their code and globals are put back afterwards,
    whatever happened."""
    functions = list({id(f): f for f in functions}.values())
    home = functions[0].__globals__
    names = typed_names(home)
    new = [(f, done[0]) for f in functions if (done := rewritten(f.__code__, names))]
    saved = {name: home[name] for name in GLOBALS if name in home}
    swapped = []
    try:
        for f, code in new:
            swapped.append((f, f.__code__))
            f.__code__ = code
        home.update(checks(found))
        with np.errstate(all="ignore"):     # a GPU never warns; int32 overflow is redone
            yield
    finally:
        for f, old in swapped:
            f.__code__ = old
        for name in GLOBALS:
            home.pop(name, None)
        home.update(saved)
