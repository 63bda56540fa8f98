"""What a code answer may not call, stated by its question and enforced twice.

A code question asks for code that does the work, so the package's own implementation of what is
asked (``gl.perfmodel.amdahl`` for an Amdahl function, the simulated ring for the ring lab) and,
where the prompt forbids it, NumPy's matrix product are out of bounds. A :class:`Rules` names
them; the question's prompt states them (:meth:`Rules.sentence`). They are enforced

* on the answer's source, before anything runs (:func:`broken`): a use of a forbidden object
  under any alias (``from gemmlab.perfmodel import amdahl as a``), the ``@`` operator or a
  ``.dot``/``__matmul__`` where the matrix product is forbidden, and code that hides its source
  from this check (``exec``, ``eval``, ``compile``, ``__import__``, ``importlib``, ``builtins``);
* while it runs (:func:`out_of_reach`, in the process that runs it): every module attribute
  bound to a forbidden object is replaced by a stand-in that raises :class:`RuleError`, so a
  name reached in a way the source check cannot see (``getattr`` with a computed name) breaks the
  rule as loudly.

Every code answer also keeps away from the course's checking machinery (``gemmlab.grading``,
``gemmlab.judging``, ``gemmlab.labs`` except what a lab hands out). Breaking a rule is a FAIL
that names the rule.
"""
import ast
import sys
from dataclasses import dataclass

# Names the fixed preamble of a code cell binds (judging.source.PREAMBLE), by module path.
PREAMBLE_ALIASES = {"math": "math", "np": "numpy", "gl": "gemmlab", "float32": "numba.float32",
                    "int32": "numba.int32", "cuda": "numba.cuda"}
MACHINERY = ("gemmlab.grading", "gemmlab.judging", "gemmlab.labs")
HIDDEN_CODE = ("exec", "eval", "compile", "__import__", "importlib", "builtins")
MATMUL_NAMES = ("numpy.dot", "numpy.matmul", "numpy.einsum", "numpy.inner", "numpy.tensordot",
                "numpy.vdot", "numpy.linalg.multi_dot", "operator.matmul", "operator.imatmul")
MATMUL_ATTRIBUTES = ("dot", "__matmul__", "__rmatmul__", "__imatmul__")


class RuleError(RuntimeError):
    """A forbidden object was called while the answer ran."""


@dataclass(frozen=True)
class Rules:
    """``names``: dotted paths of what the answer may not use (a module path forbids the module
    and everything in it); ``matmul``: no matrix product from NumPy or the ``@`` operator;
    ``allowed``: paths inside the machinery a lab hands out (``gemmlab.labs.wmma``)."""
    names: tuple = ()
    matmul: bool = False
    allowed: tuple = ()

    def forbidden(self):
        return tuple(self.names) + (MATMUL_NAMES if self.matmul else ()) + MACHINERY

    def sentence(self):
        """The rule as the prompt states it."""
        shown = [_short(n) for n in self.names]
        if self.matmul:
            shown = ["@", "np.dot", "np.matmul", "np.einsum"] + shown
        own = f"not {', '.join(shown)}, " if shown else ""
        return (f"(Rules: {own}not the course's checking code (gl.grading, gl.judging, gl.labs), "
                f"no exec or eval.)")

    def as_data(self):
        return {"names": list(self.names), "matmul": self.matmul, "allowed": list(self.allowed)}

    @classmethod
    def from_data(cls, data):
        data = data or {}
        return cls(tuple(map(str, data.get("names", ()))), bool(data.get("matmul")),
                   tuple(map(str, data.get("allowed", ()))))


def _short(path):
    return "gl." + path[len("gemmlab."):] if path.startswith("gemmlab.") else \
        "np." + path[len("numpy."):] if path.startswith("numpy.") else path


def _covers(forbidden, path):
    return path == forbidden or path.startswith(forbidden + ".")


def _forbidden_path(rules, path):
    """The forbidden path ``path`` falls under, or None."""
    if any(_covers(allowed, path) or _covers(path, allowed) for allowed in rules.allowed):
        return None
    return next((f for f in rules.forbidden() if _covers(f, path)), None)


def _resolve(path):
    """The object a dotted path names among the modules already imported here (None if not
    found): nothing is imported on behalf of a student's source."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        module = sys.modules.get(".".join(parts[:cut]))
        if module is None:
            continue
        target = module
        try:
            for part in parts[cut:]:
                target = getattr(target, part)
        except Exception:
            return None
        return target
    return None


def _forbidden_objects(rules):
    objects = {}
    for path in rules.forbidden():
        found = _resolve(path)
        if found is not None and callable(found) and not isinstance(found, type(sys)):
            objects[id(found)] = path
    return objects


class _Uses(ast.NodeVisitor):
    """Dotted paths the source uses (aliases resolved), with their line, and matmul syntax."""

    def __init__(self):
        self.aliases = dict(PREAMBLE_ALIASES)
        self.paths = []             # (path, line)
        self.matmul = []            # (what, line)

    def visit_Import(self, node):
        for alias in node.names:
            if alias.asname:
                self.aliases[alias.asname] = alias.name
            else:
                self.aliases[alias.name.split(".")[0]] = alias.name.split(".")[0]
            self.paths.append((alias.name, node.lineno))

    def visit_ImportFrom(self, node):
        if node.level or not node.module:
            return
        for alias in node.names:
            path = f"{node.module}.{alias.name}"
            self.aliases[alias.asname or alias.name] = path
            self.paths.append((path, node.lineno))

    def visit_Name(self, node):
        if node.id in HIDDEN_CODE:
            self.paths.append((node.id, node.lineno))
        elif node.id in self.aliases:
            self.paths.append((self.aliases[node.id], node.lineno))

    def visit_Attribute(self, node):
        chain, target = [node.attr], node.value
        while isinstance(target, ast.Attribute):
            chain.append(target.attr)
            target = target.value
        if node.attr in MATMUL_ATTRIBUTES:
            self.matmul.append((f".{node.attr}", node.lineno))
        if isinstance(target, ast.Name) and target.id in self.aliases:
            self.paths.append((".".join([self.aliases[target.id]] + chain[::-1]), node.lineno))
        self.generic_visit(node)

    def visit_BinOp(self, node):
        if isinstance(node.op, ast.MatMult):
            self.matmul.append(("@", node.lineno))
        self.generic_visit(node)

    def visit_AugAssign(self, node):
        if isinstance(node.op, ast.MatMult):
            self.matmul.append(("@=", node.lineno))
        self.generic_visit(node)


def _line(source, number):
    lines = source.splitlines()
    text = lines[number - 1].strip() if 0 < number <= len(lines) else ""
    return f"line {number}" + (f": `{text[:80]}`" if text else "")


def broken(rules, source):
    """The message naming the first rule ``source`` breaks, or None. (A source that does not
    parse breaks none here: running it reports the syntax error.)"""
    if rules is None:
        return None
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    uses = _Uses()
    try:
        uses.visit(tree)
    except RecursionError:
        return "your cell is nested too deeply to be checked."
    if rules.matmul and uses.matmul:
        what, line = uses.matmul[0]
        return (f"your cell uses {what} ({_line(source, line)}): this question's rule is no "
                f"@, np.dot, np.matmul or np.einsum: write the loops of the product yourself.")
    objects = _forbidden_objects(rules)
    for path, line in uses.paths:
        if path in HIDDEN_CODE:
            return (f"your cell uses {path} ({_line(source, line)}): code answers are judged on "
                    f"their source, and {path} hides what runs. Write the code itself.")
        rule = _forbidden_path(rules, path)
        if rule is None:
            found = _resolve(path)
            rule = objects.get(id(found)) if found is not None else None
            if rule is not None and _forbidden_path(rules, rule) is None:
                rule = None
        if rule is not None:
            return (f"your cell uses {_short(path)} ({_line(source, line)}), which this question "
                    f"does not allow ({_short(rule)}): {_why(rule)}")
    return None


def _why(rule):
    if any(_covers(m, rule) for m in MACHINERY):
        return "the course's checking code is not part of an answer."
    if rule in MATMUL_NAMES:
        return "the question asks for the loops of the product, not a library call."
    return "it is the package's own implementation of what the question asks you to write."


def _blocker(path, rules):
    message = (f"{_short(path)} is out of reach in this question ({rules.sentence()[1:-1]}): "
               f"{_why(path)}")

    def blocked(*args, **kwargs):
        raise RuleError(message)
    blocked.__name__ = path.rsplit(".", 1)[-1]
    return blocked


def _import(path):
    """The object at ``path``, importing its module (and, for a package, its submodules) here;
    None if there is none."""
    import importlib
    import pkgutil
    try:
        found = importlib.import_module(path)
    except ImportError:
        module, _, attribute = path.rpartition(".")
        try:
            return getattr(importlib.import_module(module), attribute)
        except (ImportError, AttributeError):
            return None
    for info in pkgutil.iter_modules(getattr(found, "__path__", [])):
        try:
            importlib.import_module(f"{path}.{info.name}")
        except Exception:  # a submodule that needs what this machine lacks: nothing to block
            pass
    return found


def out_of_reach(rules):
    """Replace every module attribute bound to a forbidden object by a stand-in raising
    :class:`RuleError` (in the process that runs a student's code, before the cell runs). The
    forbidden objects are found by importing their modules here; the machinery's modules are
    left alone (they are what runs the check), their objects are refused on the source."""
    if rules is None:
        return
    targets = {}
    for path in tuple(rules.names) + (MATMUL_NAMES if rules.matmul else ()):
        found = _import(path)
        if found is None:
            continue
        if not isinstance(found, type(sys)):
            targets[id(found)] = (found, path)
            continue
        for name, module in list(sys.modules.items()):     # a package: what it defines
            if _covers(path, name):
                for value in list(vars(module).values()):
                    if callable(value) and _covers(path, str(getattr(value, "__module__", ""))):
                        targets[id(value)] = (value, f"{name}.{getattr(value, '__name__', '')}")
    if not targets:
        return
    for module in list(sys.modules.values()):
        namespace = getattr(module, "__dict__", None)
        if not isinstance(namespace, dict):
            continue
        for key, value in list(namespace.items()):
            hit = targets.get(id(value))
            if hit is not None and hit[0] is value:
                namespace[key] = _blocker(hit[1], rules)
