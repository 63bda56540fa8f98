"""``gemmlab assign``: generate the student notebooks in ``exercises/`` from ``solutions/`` (an
instructor's tool).

In a code cell, the lines between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` are the answer.
They become ``# YOUR CODE HERE`` plus a placeholder that keeps the rest of the notebook runnable:
``name = ...`` for each name the block assigns at its top level, ``return ...`` when the block
returns, and ``...`` otherwise. ``check()`` reads ``...`` as "not attempted". In a markdown
cell the block becomes "_Your answer here._". Outputs and execution counts are dropped.

Student work is never lost: ``exercises/.assign-manifest.json`` keeps the hash of every notebook
assign wrote; a notebook that changed since (a student's answers, a hand edit) is not overwritten
without ``--force``, and no file assign did not write (or that changed since) is ever deleted.
Students work on copies in their student folder, ``work/exercises/`` (:mod:`.handout`, run by
``make lab``).
"""
import ast
import hashlib
import json
import sys
import textwrap
from pathlib import Path

from .files import write_file

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
GENERATED_NOTE = "generated from solutions/ by `gemmlab assign`: edit the solution, not this file"
MANIFEST = ".assign-manifest.json"      # in exercises/: {notebook: sha256 of what assign wrote}


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
    import nbformat     # here, not on import: check() imports this package, and nbformat costs 1 s
    nb = nbformat.from_dict(nb)
    for index, cell in enumerate(nb.cells):
        cell.source = strip_source(cell.source, cell.cell_type, f"{name}, cell {index + 1}")
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    nb.metadata["gemmlab"] = {"note": GENERATED_NOTE}
    return nb


def render(nb):
    import nbformat
    return nbformat.writes(nb) + "\n"


def expected_exercises(solutions_dir):
    """{file name: notebook text} that ``solutions_dir`` generates."""
    import nbformat
    result = {}
    for path in sorted(Path(solutions_dir).glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        result[path.name] = render(student_notebook(nb, path.name))
    return result


def _digest(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _read(path):
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _load_manifest(folder):
    try:
        data = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def plan(solutions, exercises):
    """What ``gemmlab assign`` would do, as lists of notebook names: ``write`` (missing, or still
    exactly as assign wrote it), ``edited`` (changed since: never overwritten without --force),
    ``current``, ``remove`` (generated, untouched, and its solution is gone), ``keep`` (no
    solution, but edited or not written by assign: left alone); plus the texts and manifest."""
    wanted = expected_exercises(solutions)
    out = Path(exercises)
    manifest = _load_manifest(out)
    steps = {k: [] for k in ("write", "edited", "current", "remove", "keep")}
    for name, text in wanted.items():
        now = _read(out / name) if (out / name).is_file() and not (out / name).is_symlink() \
            else None
        if not (out / name).exists() and not (out / name).is_symlink():
            steps["write"].append(name)
        elif now == text:
            steps["current"].append(name)
        elif now is not None and manifest.get(name) == _digest(now):
            steps["write"].append(name)
        else:
            steps["edited"].append(name)
    present = sorted(p.name for p in out.glob("*.ipynb")) if out.is_dir() else []
    for name in present:
        if name not in wanted:
            now = _read(out / name)
            untouched = now is not None and manifest.get(name) == _digest(now)
            steps["remove" if untouched else "keep"].append(name)
    return steps, wanted, manifest


def main(solutions="solutions", exercises="exercises", check_only=False, force=False):
    """Write (or, with ``check_only``, compare) exercises/; return the process exit status:
    0 done, 1 something stale or refused, 2 nothing to do it from."""
    if not sorted(Path(solutions).glob("*.ipynb")):
        print(f"gemmlab assign: no notebooks in {solutions}/: `gemmlab assign` is the "
              f"instructors' tool and runs in the course repository (a student copy has no "
              f"solutions)", file=sys.stderr)
        return 2
    try:
        steps, wanted, manifest = plan(solutions, exercises)
    except SolutionMarkerError as exc:
        print(f"gemmlab assign: {exc}", file=sys.stderr)
        return 2
    out = Path(exercises)
    record = {n: _digest(wanted[n]) for n in steps["current"]}
    if check_only:
        return _report_check(out, solutions, steps, manifest, record)
    out.mkdir(parents=True, exist_ok=True)
    replace = steps["write"] + (steps["edited"] if force else [])
    for name in replace:
        write_file(out / name, wanted[name], mode=0o666)     # not private: course material
        record[name] = _digest(wanted[name])
    for name in steps["remove"]:
        (out / name).unlink()
    refused = [] if force else steps["edited"]
    for name in refused:
        record[name] = manifest[name] if name in manifest else None
        print(f"gemmlab assign: {out / name} changed since gemmlab assign wrote it (a student's "
              f"answers, or a hand edit): left as it is; `gemmlab assign --force` replaces it",
              file=sys.stderr)
    for name in steps["keep"]:
        record[name] = manifest.get(name)
        print(f"{out / name}: no solution, and not as gemmlab assign wrote it: left alone")
    record = {k: v for k, v in sorted(record.items()) if v}
    if record != manifest:
        write_file(out / MANIFEST, json.dumps(record, indent=1) + "\n", mode=0o666)
    print(f"{out}/: {len(replace)} written, {len(steps['remove'])} removed, "
          f"{len(steps['current'])} already up to date"
          + (f", {len(refused)} refused (changed since assign wrote them)" if refused else ""))
    return 1 if refused else 0


def _report_check(out, solutions, steps, manifest, record):
    for name in steps["write"] + steps["edited"]:
        print(f"stale: {out / name} (run `gemmlab assign`)")
    for name in steps["remove"]:
        print(f"no solution for: {out / name}")
    for name in steps["keep"]:
        print(f"not generated by gemmlab assign (left alone): {out / name}")
    ours = {k: v for k, v in manifest.items() if k in record}
    manifest_stale = ours != record
    if manifest_stale:
        print(f"{out / MANIFEST} does not match the notebooks (run `gemmlab assign`)")
    bad = steps["write"] or steps["edited"] or steps["remove"] or manifest_stale
    if not bad:
        print(f"{out}/ is up to date with {solutions}/ ({len(record)} notebooks)")
    return 1 if bad else 0

