"""Every file under benchmarks/ still fits the package it drives, without running it (most need GPUs,
MPI ranks or minutes): each script compiles, and every name it takes from gemmlab exists and is
public. A benchmark is run by hand, months apart, so a rename in the package would otherwise only
show on the next GPU run (ring_breakdown_rank.py imported a private helper renamed long before).

What is checked, from each .py file's syntax tree: ``import gemmlab.x`` and ``from gemmlab.x
import name`` (anywhere, functions included) import, ``name`` is an attribute of the module, and
``module.attr.attr`` chains on a module so imported resolve as long as they meet modules. In the
shell scripts: ``python -m gemmlab.x`` and ``from gemmlab.x import name`` in their Python lines."""
import ast
import importlib
import importlib.util
import py_compile
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted((ROOT / "benchmarks").glob("*.py"))
SHELL = sorted((ROOT / "benchmarks").glob("*.sh"))
PACKAGES = ("gemmlab", "gemmlab_grader")


def _ours(module):
    return (module or "").split(".")[0] in PACKAGES


def _private(name):
    return name.startswith("_") and not name.startswith("__")


def _bindings(tree):
    """{local name: dotted module or "module:attribute"} for every import of our packages, and the
    imported names as (line, module, name or None)."""
    local, imported = {}, []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _ours(alias.name):
                    imported.append((node.lineno, alias.name, None))
                    # `import a.b` binds a; `import a.b as c` binds c to a.b
                    local[alias.asname or alias.name.split(".")[0]] = (
                        alias.name if alias.asname else alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and _ours(node.module):
            for alias in node.names:
                imported.append((node.lineno, node.module, alias.name))
                local[alias.asname or alias.name] = f"{node.module}:{alias.name}"
    return local, imported


_MISSING = object()


def _attribute(value, name):
    """``value.name`` as Python's import sees it: a package's submodule counts even before it is
    imported (``from gemmlab.collectives import ring_steps``); _MISSING when there is none."""
    if hasattr(value, name):
        return getattr(value, name)
    if hasattr(value, "__path__"):
        try:
            return importlib.import_module(f"{value.__name__}.{name}")
        except ModuleNotFoundError as err:
            if err.name != f"{value.__name__}.{name}":
                raise
    return _MISSING


def _resolve(binding):
    module, _, name = binding.partition(":")
    value = importlib.import_module(module)
    return _attribute(value, name) if name else value


def _chains(tree):
    """Every outermost ``a.b.c`` chain of attributes on a plain name: (line, ["a", "b", "c"])."""
    inner = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and id(node) not in inner:
            parts, value = [], node
            while isinstance(value, ast.Attribute):
                parts.append(value.attr)
                value = value.value
            if isinstance(value, ast.Name):
                yield node.lineno, [value.id, *reversed(parts)]


def _problems(path):
    """What in ``path`` no longer fits the package: ["line N: ..."]."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    local, imported = _bindings(tree)
    found = []
    for line, module, name in imported:
        try:
            value = importlib.import_module(module)
        except ImportError as err:
            found.append(f"line {line}: import {module}: {err}")
            continue
        if name is not None and _attribute(value, name) is _MISSING:
            found.append(f"line {line}: {module} has no {name}")
        if name is not None and _private(name):
            found.append(f"line {line}: {module}.{name} is private; use a public name")
    for line, (root, *attrs) in _chains(tree):
        if root not in local:
            continue
        try:
            value = _resolve(local[root])
        except ImportError:
            continue                        # reported above, at the import
        where = root
        for attr in attrs:
            if not isinstance(value, type(ast)):    # past the modules: an object's own attributes
                break
            if _private(attr):
                found.append(f"line {line}: {where}.{attr} is private; use a public name")
            if _attribute(value, attr) is _MISSING:
                found.append(f"line {line}: {where} ({value.__name__}) has no {attr}")
                break
            value, where = _attribute(value, attr), f"{where}.{attr}"
    return list(dict.fromkeys(found))      # one line per problem, not per name imported with it


def _shell_problems(text):
    """What the Python lines of a shell script name that the package no longer has."""
    missing = []
    for module in re.findall(r"-m\s+((?:gemmlab|gemmlab_grader)(?:\.\w+)*)", text):
        try:
            found = importlib.util.find_spec(module)
        except ModuleNotFoundError:         # a package on the way is missing
            found = None
        if found is None:
            missing.append(f"-m {module}")
    for module, names in re.findall(r"from\s+((?:gemmlab|gemmlab_grader)[\w.]*)\s+import\s+"
                                    r"([\w ,]+)", text):
        try:
            value = importlib.import_module(module)
        except ImportError:
            missing.append(f"import {module}")
            continue
        missing += [f"{module}.{name}" for name in (n.split(" as ")[0].strip()
                                                    for n in names.split(","))
                    if name and _attribute(value, name) is _MISSING]
    return missing


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.name)
def test_a_benchmark_script_compiles(path, tmp_path):
    py_compile.compile(str(path), cfile=str(tmp_path / "out.pyc"), doraise=True)


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.name)
def test_what_a_benchmark_script_takes_from_gemmlab_exists_and_is_public(path):
    assert not _problems(path), f"{path.name}:\n" + "\n".join(_problems(path))


@pytest.mark.parametrize("path", SHELL, ids=lambda p: p.name)
def test_what_a_benchmark_shell_script_takes_from_gemmlab_exists(path):
    missing = _shell_problems(path.read_text(encoding="utf-8"))
    assert not missing, f"{path.name} names what gemmlab no longer has: {missing}"


def test_the_checker_finds_a_missing_name_a_private_one_and_a_broken_chain(tmp_path):
    script = tmp_path / "rotten.py"
    script.write_text(
        "import gemmlab as gl\n"
        "from gemmlab.collectives import ring_steps\n"
        "from gemmlab.collectives.allreduce_mpi_rank import _time_once, gone\n"
        "from gemmlab.no_such_module import anything\n"
        "def f(x):\n"
        "    plan = ring_steps.RingPlan.split(2, 8, 4)\n"       # fine: a class, then its own
        "    x.anything.at_all\n"                                # not ours: not followed
        "    return gl.collectives.no_such_function(plan), ring_steps._private_helper\n")
    found = sorted(p.split(": ", 1)[1] for p in _problems(script))
    assert found == [
        "gemmlab.collectives.allreduce_mpi_rank has no gone",
        "gemmlab.collectives.allreduce_mpi_rank._time_once is private; use a public name",
        "gl.collectives (gemmlab.collectives) has no no_such_function",
        "import gemmlab.no_such_module: No module named 'gemmlab.no_such_module'",
        "ring_steps (gemmlab.collectives.ring_steps) has no _private_helper",
        "ring_steps._private_helper is private; use a public name",
    ]


def test_the_shell_checker_finds_a_missing_module_and_name():
    text = ('$PY -m gemmlab.cli bench\n$PY -m gemmlab.collectives.worker --algos ring\n'
            'GPUS=$($PY -c "from gemmlab.collectives.nccl import visible_gpus, gone_gpus")\n'
            '$PY -c "from gemmlab.no_such import x"\n')
    assert _shell_problems(text) == ["-m gemmlab.collectives.worker",
                                     "gemmlab.collectives.nccl.gone_gpus",
                                     "import gemmlab.no_such"]
