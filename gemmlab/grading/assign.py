"""``gemmlab assign``: generate the student notebooks in ``exercises/`` from ``solutions/``.

In a code cell, the lines between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` are the answer.
They become ``# YOUR CODE HERE`` plus a placeholder that keeps the rest of the notebook runnable:
``name = ...`` for each name the block assigns at its top level, ``return ...`` when the block
returns, and ``...`` otherwise. ``check()`` reads ``...`` as "not attempted". In a markdown
cell the block becomes "_Your answer here._". Outputs and execution counts are dropped.
"""
import ast
import sys
import textwrap
from pathlib import Path

import nbformat

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
GENERATED_NOTE = "generated from solutions/ by `gemmlab assign`: edit the solution, not this file"


class SolutionMarkerError(ValueError):
    """A solution block is unbalanced or is not valid Python on its own."""


def _assigned_names(tree):
    names = []
    for node in tree.body:
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.append(node.name)
        for target in targets:
            for name in _bound_names(target):
                if name not in names:
                    names.append(name)
    return names


def _bound_names(target):
    """Names an assignment target binds: ``x``, ``x, y`` and ``*rest`` do; ``x[i]`` and ``x.a``
    store into an existing object and bind nothing (``sA[ty, tx] = a`` must not stub ``sA``)."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Starred):
        return _bound_names(target.value)
    if isinstance(target, (ast.Tuple, ast.List)):
        return [name for element in target.elts for name in _bound_names(element)]
    return []


def _placeholder(block, indent, where):
    code = textwrap.dedent("\n".join(block))
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        raise SolutionMarkerError(f"{where}: the solution block is not valid Python on its own "
                                  f"({exc.msg}, line {exc.lineno} of the block)") from None
    if any(isinstance(node, ast.Return) for node in tree.body):
        stubs = ["return ..."]
    else:
        stubs = [f"{name} = ..." for name in _assigned_names(tree)] or ["..."]
    return [indent + "# YOUR CODE HERE"] + [indent + s for s in stubs]


def strip_source(source, cell_type="code", where="cell"):
    """The student version of one cell's source."""
    lines = source.split("\n")
    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        if line.strip() == END:
            raise SolutionMarkerError(f"{where}: '{END}' without a '{BEGIN}' before it")
        if line.strip() != BEGIN:
            out.append(line)
            i += 1
            continue
        try:
            j = next(k for k in range(i + 1, len(lines)) if lines[k].strip() in (BEGIN, END))
        except StopIteration:
            raise SolutionMarkerError(f"{where}: '{BEGIN}' is never closed by '{END}'") from None
        if lines[j].strip() == BEGIN:
            raise SolutionMarkerError(f"{where}: a solution block opens inside another one")
        indent = line[: len(line) - len(line.lstrip())]
        if cell_type == "code":
            out.extend(_placeholder(lines[i + 1:j], indent, where))
        else:
            out.append(indent + "_Your answer here._")
        i = j + 1
    return "\n".join(out)


def student_notebook(nb, name="notebook"):
    """A copy of a solutions notebook with every solution block replaced, without outputs."""
    nb = nbformat.from_dict(nb)
    for index, cell in enumerate(nb.cells):
        cell.source = strip_source(cell.source, cell.cell_type, f"{name}, cell {index + 1}")
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    nb.metadata["gemmlab"] = {"note": GENERATED_NOTE}
    return nb


def render(nb):
    return nbformat.writes(nb) + "\n"


def expected_exercises(solutions_dir):
    """{file name: notebook text} that ``solutions_dir`` generates."""
    result = {}
    for path in sorted(Path(solutions_dir).glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        result[path.name] = render(student_notebook(nb, path.name))
    return result


def main(solutions="solutions", exercises="exercises", check_only=False):
    """Write (or, with ``check_only``, compare) exercises/; return the process exit status."""
    try:
        wanted = expected_exercises(solutions)
    except SolutionMarkerError as exc:
        print(f"gemmlab assign: {exc}", file=sys.stderr)
        return 2
    out = Path(exercises)
    present = {p.name for p in out.glob("*.ipynb")} if out.is_dir() else set()
    stale = sorted(n for n, text in wanted.items()
                   if not (out / n).is_file() or (out / n).read_text(encoding="utf-8") != text)
    extra = sorted(present - set(wanted))
    if check_only:
        for name in stale:
            print(f"stale: {out / name} (run `gemmlab assign`)")
        for name in extra:
            print(f"no solution for: {out / name}")
        if not stale and not extra:
            print(f"{out}/ is up to date with {solutions}/ ({len(wanted)} notebooks)")
        return 1 if stale or extra else 0
    out.mkdir(parents=True, exist_ok=True)
    for name in stale:
        (out / name).write_text(wanted[name], encoding="utf-8")
    for name in extra:
        (out / name).unlink()
    print(f"{out}/: {len(stale)} written, {len(extra)} removed, "
          f"{len(wanted) - len(stale)} already up to date")
    return 0
