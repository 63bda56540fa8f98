"""What students get: their own copy of the course to work in, and a student copy of the course.

``gemmlab work [DIR]`` (run by ``gemmlab lab`` and so ``make lab``) makes the student folder ``DIR`` (``work/`` by
default) with the same layout as the course repository, so that every link of a notebook
resolves there as it does in the repository, unchanged: ``DIR/notebooks/`` (the lessons),
``DIR/exercises/`` (the exercise notebooks) and ``DIR/docs/glossary.md``. The same folder comes
from a checkout (``make lab``) and from an installed wheel (``gemmlab work DIR``, the course read
through :mod:`gemmlab.course`). A file already in ``DIR`` is never overwritten: a student's answers
stay, and a new course version only adds what is new. A notebook the older layout put in
``DIR/NN_*.ipynb`` (exercises) or ``DIR/lessons/`` is the student's: it becomes the new copy
(copied; the old file stays). An exercise notebook a student has under its former name
(``DIR/exercises/05_tiled_gemm.ipynb``, before exercises were named ``NN_name_exercises.ipynb``)
is theirs: it stays as it is, no blank copy under the new name is put beside it, and one line
says which files are theirs. ``work/`` is ignored by git, and the pristine ``notebooks/`` are never
opened, so a session leaves ``git status`` clean. Finding no exercise notebook at all is an error,
never a silent "0 copied".

``gemmlab assign --release DIR`` writes a student copy of the course into a new folder DIR, a
repository to publish: the lessons, the exercises, the package with setup.py (so that its wheel
carries the course), the LICENSE, the dependency lists, the students' docs
(:data:`STUDENT_DOCS`), ``docs/release/README.md`` as its README and the course Makefile's
``venv`` and ``lab`` targets as its Makefile; no ``solutions/``, no ``tests/`` (they grade the
solutions), no CI, no instructors' docs, no grader (its commands are left out of the release's
``pyproject.toml``, so installing it gives none that cannot start). It is marked as a release
(:data:`RELEASE_MARK`), so ``reveal()`` says that no worked answers ship. The
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
from . import student
from .assign import BEGIN, MANIFEST, main as assign_main
from .files import write_file

RELEASE = ("LICENSE", "setup.py", "MANIFEST.in", "CHANGELOG.md", "CITATION.cff",
           "constraints.txt", "pyproject.toml", "environment.yml", ".gitignore", "jupyter",
           "notebooks", "exercises", "gemmlab", "benchmarks")
STUDENT_DOCS = ("glossary.md", "misconceptions.md", "install.md", "labs.md", "troubleshooting.md")
STUDENT_README = "docs/release/README.md"
STUDENT_TARGETS = ("venv", "lab")      # the course Makefile's targets a release keeps
JUNK = ("__pycache__", ".ipynb_checkpoints", "*.pyc", "*.egg-info", ".DS_Store", MANIFEST)
RELEASE_MARK = ".gemmlab-release"       # at a release's root: no worked answers ship
NOTEBOOKS = "[0-9][0-9]_*.ipynb"
LESSONS = "[0-9][0-9]*_*.ipynb"         # also 12b_hopper_ladder.ipynb: part 2 of lesson 12
# (folder of the course, what of it, where an older gemmlab work put it in the student folder)
STUDENT_PARTS = (("notebooks", LESSONS, "lessons"), ("exercises", NOTEBOOKS, "."),
                 ("docs", "glossary.md", None))
FIRST_LESSON = "notebooks/00_start_here.ipynb"


def _present(path):
    return path.exists() or path.is_symlink()


def copy_missing(source, target, pattern=NOTEBOOKS, earlier=None, former=None):
    """Copy the files ``pattern`` of ``source`` that ``target`` lacks; return (names copied,
    names of the files in ``target`` that stand for the others). ``former(name)``: the name an
    older course gave a file (or None); the student's file under it in ``target`` stands for it,
    so no copy is put beside it. Where ``earlier`` (a folder) has a file of either name, that
    file (the student's, from an older layout) is the one copied."""
    source, target = Path(source), Path(target)
    target.mkdir(parents=True, exist_ok=True)
    copied, kept = [], []
    for found in sorted(source.glob(pattern)):
        names = [found.name, *filter(None, [former(found.name) if former else None])]
        theirs = next((name for name in names if _present(target / name)), None)
        if theirs is not None:
            kept.append(theirs)
            continue
        dest = target / found.name
        olders = [Path(earlier) / name for name in names] if earlier is not None else []
        origin = next((older for older in olders if older.is_file() and not older.is_symlink()),
                      found)
        with open(dest, "xb") as f:               # "x": never over a file that appeared since
            f.write(origin.read_bytes())
        copied.append(found.name)
    return copied, kept


def _course_root(exercises):
    """The folder the course is copied from: the parent of ``exercises`` when given, else the
    current folder when it is a checkout (``make lab``), else the installed course."""
    if exercises is not None:
        return Path(exercises).parent, Path(exercises)
    if Path("exercises").is_dir() and Path("notebooks").is_dir():
        return Path("."), Path("exercises")
    return course.root(), course.path("exercises")


def make_student_folder(work="work", exercises=None):
    """Fill the student folder ``work`` (see the module); return {part: (copied, kept)}."""
    root, source = _course_root(exercises)
    work = Path(work)
    done = {}
    for part, pattern, earlier in STUDENT_PARTS:
        origin = source if part == "exercises" else root / part
        if origin.is_dir():
            done[part] = copy_missing(origin, work / part, pattern,
                                      work / earlier if earlier else None,
                                      course.former_exercise_name if part == "exercises" else None)
    student.start(work)
    return done


def work_main(exercises=None, work="work", next_step=True):
    """``gemmlab work``: make or complete the student folder ``work``; ``next_step``: also say
    how to start JupyterLab in it (``gemmlab lab``, which runs this first, does not)."""
    try:
        root, source = _course_root(exercises)
    except FileNotFoundError as exc:
        print(f"gemmlab work: {exc}", file=sys.stderr)
        return 2
    if not any(source.glob(NOTEBOOKS)):
        print(f"gemmlab work: no exercise notebooks (NN_*.ipynb) in {source}: give the course's "
              f"exercises/ folder with --exercises, or run it in the course's folder",
              file=sys.stderr)
        return 2
    done = make_student_folder(work, exercises)
    for part, (copied, kept) in done.items():
        print(f"{Path(work) / part}/: {len(copied)} new, {len(kept)} already yours (left as "
              f"they are)")
    print(f"Your student folder is {work}/: lessons in {Path(work) / 'notebooks'}/, exercises "
          f"in {Path(work) / 'exercises'}/.")
    handed_out = {path.name for path in source.glob(NOTEBOOKS)}
    formerly = [name for name in done.get("exercises", ((), ()))[1] if name not in handed_out]
    if formerly:
        print(f"Your exercise notebooks under their former names stay yours, as they are: "
              f"{', '.join(formerly)} in {Path(work) / 'exercises'}/ (no blank "
              f"NN_name{course.EXERCISES_ENDING} was put beside them; rename one to that name to "
              f"open it from its lesson's link).")
    if next_step:
        print(f"Start JupyterLab in it with `gemmlab lab {work}` (it opens {FIRST_LESSON}).")
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
    (dest / "docs").mkdir()
    for name in STUDENT_DOCS:
        shutil.copy2(root / "docs" / name, dest / "docs" / name)
    shutil.copy2(root / STUDENT_README, dest / "README.md")
    write_file(dest / "Makefile", student_makefile((root / "Makefile").read_text()), mode=0o644)
    _drop_missing_commands(dest / "pyproject.toml", dest)
    write_file(dest / RELEASE_MARK, "A class release of the course: no worked answers ship.\n",
               mode=0o644)
    leaked = [str(p.relative_to(dest)) for p in dest.rglob("*.ipynb")
              if BEGIN in p.read_text(encoding="utf-8", errors="replace")]
    if leaked:
        raise RuntimeError(f"solution blocks found in the release: {', '.join(leaked)}")
    return dest


def student_makefile(text):
    """The course Makefile cut to :data:`STUDENT_TARGETS`: the paragraphs (blank-line separated)
    holding their rules and the rules of what they need (``lab`` needs the ``[lab]`` extra's stamp,
    which needs the venv's), the variables those use, and a .PHONY line naming only the targets."""
    paragraphs, variables = [], {}
    for paragraph in text.split("\n\n"):
        for line in paragraph.splitlines():
            if var := re.match(r"([A-Z_]+) [?:]?=", line):
                variables[var[1]] = line
        rules = re.findall(r"^([$()\w.-]+):(?!=)(.*)$", paragraph, re.M)
        if rules:
            paragraphs.append((paragraph, rules))
    wanted, kept, grew = set(STUDENT_TARGETS), [], True
    while grew:                 # the students' targets, and the targets these need
        grew = False
        for paragraph, rules in paragraphs:
            if paragraph not in kept and any(target in wanted for target, _ in rules):
                kept.append(paragraph)
                wanted |= {p for _, needs in rules for p in needs.split()}
                grew = True
    rules = ["\n".join(line for line in paragraph.splitlines()
                       if not re.match(r"[A-Z_]+ [?:]?=", line))
             for paragraph, _ in paragraphs if paragraph in kept]
    used, grew = set(), True
    while grew:                 # the variables the rules use, and those these use
        text_used = "\n".join(rules + [variables[v] for v in used])
        found = {v for v in variables if f"$({v})" in text_used}
        grew, used = found - used, used | found
    head = [variables[v] for v in variables if v in used]
    return "\n\n".join(["# The students' commands (from the course's Makefile).\n" + "\n".join(head),
                        f".PHONY: {' '.join(STUDENT_TARGETS)}", *rules]) + "\n"


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
          f"that check() compares with: see the grader's README, 'How this compares, and what "
          f"students can see'.")
    return 0
