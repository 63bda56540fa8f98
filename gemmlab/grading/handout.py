"""What students get: their own copies of the exercises, and a student copy of the course.

``gemmlab work [DIR]`` (run by ``make lab``) copies each ``exercises/NN_*.ipynb`` into ``DIR``
(``work/`` by default) unless ``DIR`` already has a file of that name: a student's answers there are
never overwritten, and a new course version only adds the notebooks that are new. ``work/`` is
ignored by git. Outside a checkout (the course installed from a wheel, on Colab) the exercises come
from the installed course (``gemmlab.course``), and the lessons go to ``DIR/lessons/`` the same
way. Finding no exercise notebook at all is an error, never a silent "0 copied".

``gemmlab assign --release DIR`` writes a student copy of the course into a new folder DIR: the
lessons, the exercises, the package, the README, the Makefile and the dependency lists; no
``solutions/``, no ``tests/`` (they grade the solutions), no CI, no grader (its commands are left
out of the release's ``pyproject.toml``, so installing it gives none that cannot start). The
package keeps its question bank, reference answers included: ``check()`` needs them to give
feedback, so a student who reads the package's source can find them. The grader does not depend
on hiding them (it collects the answers and runs code on hidden cases itself), and a graded
notebook's kernel gets no references.
"""
import re
import shutil
import sys
from pathlib import Path

from .. import course
from .assign import BEGIN, MANIFEST, main as assign_main

RELEASE = ("README.md", "Makefile", "pyproject.toml", "environment.yml", ".gitignore",
           "notebooks", "exercises", "gemmlab", "docs", "benchmarks")
JUNK = ("__pycache__", ".ipynb_checkpoints", "*.pyc", "*.egg-info", ".DS_Store", MANIFEST)


def copy_exercises(exercises="exercises", work="work"):
    """Copy the notebooks ``NN_*.ipynb`` of ``exercises`` that ``work/`` lacks; return (names
    copied, names already there). Also used for the lessons of an installed course."""
    exercises, work = Path(exercises), Path(work)
    work.mkdir(parents=True, exist_ok=True)
    copied, kept = [], []
    for source in sorted(exercises.glob("[0-9][0-9]_*.ipynb")):
        target = work / source.name
        if target.exists() or target.is_symlink():
            kept.append(source.name)
            continue
        with open(target, "xb") as f:               # "x": never over a file that appeared since
            f.write(source.read_bytes())
        copied.append(source.name)
    return copied, kept


def _sources(exercises):
    """(exercises folder, lessons folder or None): the given folder, else ./exercises of a
    checkout, else the installed course's exercises and lessons."""
    if exercises is not None:
        return Path(exercises), None
    if Path("exercises").is_dir():
        return Path("exercises"), None
    return course.path("exercises"), course.path("notebooks")


def work_main(exercises=None, work="work"):
    """``gemmlab work``: hand out the exercises (and, from an installed course, the lessons)."""
    try:
        source, lessons = _sources(exercises)
    except FileNotFoundError as exc:
        print(f"gemmlab work: {exc}", file=sys.stderr)
        return 2
    if not any(source.glob("[0-9][0-9]_*.ipynb")):
        print(f"gemmlab work: no exercise notebooks (NN_*.ipynb) in {source}: give the course's "
              f"exercises/ folder with --exercises, or run it in the course's folder",
              file=sys.stderr)
        return 2
    copied, kept = copy_exercises(source, work)
    print(f"{work}/: your exercise notebooks ({len(copied)} new copied from {source}/, "
          f"{len(kept)} already yours, left as they are)")
    if lessons is not None:
        copied, kept = copy_exercises(lessons, Path(work) / "lessons")
        print(f"{Path(work) / 'lessons'}/: the lessons ({len(copied)} new, {len(kept)} already "
              f"there, left as they are)")
    return 0


def release(dest, root="."):
    """Write the student copy of the course at ``root`` into the new folder ``dest``."""
    root, dest = Path(root).resolve(), Path(dest).resolve()
    if dest == root or root in dest.parents and dest.relative_to(root).parts[0] in RELEASE:
        raise ValueError(f"{dest} lies inside the course folder's {RELEASE}: choose another place")
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise FileExistsError(f"{dest} exists and is not an empty folder: a release never "
                              f"writes over anything")
    if assign_main(root / "solutions", root / "exercises", check_only=True) != 0:
        raise ValueError("exercises/ is not what solutions/ generates: run `gemmlab assign` first")
    dest.mkdir(parents=True, exist_ok=True)
    for name in RELEASE:
        source = root / name
        if source.is_dir():
            shutil.copytree(source, dest / name, ignore=shutil.ignore_patterns(*JUNK),
                            symlinks=True)
        elif source.is_file():
            shutil.copy2(source, dest / name)
    _drop_missing_commands(dest / "pyproject.toml", dest)
    leaked = [str(p.relative_to(dest)) for p in dest.rglob("*.ipynb")
              if BEGIN in p.read_text(encoding="utf-8", errors="replace")]
    if leaked:
        raise RuntimeError(f"solution blocks found in the release: {', '.join(leaked)}")
    return dest


def _drop_missing_commands(pyproject, dest):
    """Remove from ``pyproject`` each command of ``[project.scripts]`` whose package is not in
    ``dest`` (the grader's)."""
    lines, section = [], ""
    for line in pyproject.read_text(encoding="utf-8").splitlines(keepends=True):
        if line.startswith("["):
            section = line.strip()
        entry = re.match(r'\s*[\w.-]+\s*=\s*"(\w+)[\w.]*:', line)
        if section == "[project.scripts]" and entry and not (dest / entry[1]).is_dir():
            continue
        lines.append(line)
    pyproject.write_text("".join(lines), encoding="utf-8")


def release_main(dest, root="."):
    try:
        where = release(dest, root)
    except (ValueError, FileExistsError, RuntimeError) as exc:
        print(f"gemmlab assign --release: {exc}", file=sys.stderr)
        return 2
    print(f"{where}: a student copy of the course ({', '.join(RELEASE)}); without solutions/, "
          f"tests/ and the grader. The package's question bank still holds the reference answers "
          f"that check() compares with: see the README, 'What students can see'.")
    return 0
