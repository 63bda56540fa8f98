"""Google Colab: every notebook opens there from its "Open in Colab" link, and its first code cell
installs the course with the CUDA stack that matches the GPU's driver. Elsewhere that cell does
nothing.

The cell stays tiny (:data:`SETUP_CELL`): on Colab it pip-installs the package from
:data:`REPOSITORY` when it is not importable yet, then calls :func:`setup`, which decides the rest
here, where it is tested: :func:`plan` turns the driver's CUDA version, the CuPy wheels already
installed (Colab ships one) and the package's extras into pip commands; :func:`restart_needed`
says whether modules the kernel had already imported changed version underneath it (then the
session must restart once; the cell, run again, finds everything installed and does nothing).

:data:`REPOSITORY` is the course's address, one setting for every copy of it: ``python -m
gemmlab.colab notebooks solutions`` writes the link and the cell at the top of every notebook there
and the address into pyproject.toml and CITATION.cff (:func:`write_metadata`); then ``gemmlab
assign`` for exercises/. A solution notebook links to its exercise, never to itself.
"""
import importlib.metadata
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from . import cudastack

# The course's public repository. A placeholder: the course has no public address yet. Set this
# when you publish the course, then run `python -m gemmlab.colab` and `gemmlab assign` (README,
# "Colab"); tests/test_colab.py fails while a copy of it disagrees.
REPOSITORY = "https://github.com/gemmlab/gemmlab"
BRANCH = "main"
PACKAGE = f"gemmlab @ git+{REPOSITORY}@{BRANCH}"
LINK_ID, CELL_ID = "colab-link", "colab-setup"
# The badge image of the link cell (fetched from Colab's server when the notebook is shown)
BADGE = "https://colab.research.google.com/assets/colab-badge.svg"
RESTART = ("Restart the session once (Runtime > Restart session), then run the notebook again: "
           "packages this session had already imported were upgraded.")

SETUP_CELL = f'''# On Google Colab only: install the course, with the CuPy wheel that matches this GPU's driver.
# Anywhere else this cell does nothing (README: "Colab").
import importlib.util, subprocess, sys
if "google.colab" in sys.modules:
    if importlib.util.find_spec("gemmlab") is None:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "{PACKAGE}"], check=True)
    import gemmlab.colab
    gemmlab.colab.setup()'''


@dataclass
class Plan:
    """What :func:`setup` will do: pip commands (argument lists after ``pip``) and lines to print."""
    commands: list = field(default_factory=list)
    notes: list = field(default_factory=list)


def extra_requirements(extra, requires=None):
    """The requirements the package declares for ``extra`` ("cuda12"...), from its metadata."""
    requires = importlib.metadata.requires("gemmlab") if requires is None else requires
    wanted = []
    for line in requires or ():
        requirement, _, marker = line.partition(";")
        if marker.replace('"', "'").strip() == f"extra == '{extra}'":
            wanted.append(requirement.strip())
    return wanted


def plan(driver, cupy, requires=None):
    """The :class:`Plan` for a driver supporting CUDA ``driver`` = (major, minor) (None: no GPU)
    with ``cupy`` = {distribution: version} already installed."""
    result = Plan()
    if driver is None:
        result.notes.append("No GPU in this Colab session: the course runs on Numba's CUDA "
                            "simulator. For real kernels: Runtime > Change runtime type > a GPU.")
        return result
    extra = cudastack.extra_for(driver)
    if extra is None:
        result.notes.append(f"This driver supports CUDA {driver[0]}.{driver[1]}; the course needs "
                            f"12 or newer: the lessons run on the simulator.")
        return result
    ours = next(dist for dist, major in cudastack.CUPY_WHEELS.items()
                if cudastack.EXTRAS[major] == extra)
    stale = [dist for dist in cupy if dist != ours]     # two CuPy wheels conflict
    if stale:
        result.commands.append(["uninstall", "-y", "-q", *sorted(stale)])
    needed = extra_requirements(extra, requires)
    if not needed:
        raise RuntimeError(f"the installed gemmlab declares no '{extra}' extra: reinstall it "
                           f"from {REPOSITORY}")
    result.commands.append(["install", "-q", *needed])
    result.notes.append(f"Driver: CUDA {driver[0]}.{driver[1]}; installed the '{extra}' stack "
                        f"({', '.join(needed)}).")
    return result


def loaded_versions(modules=None):
    """{distribution: version} of the course's dependencies this process has already imported."""
    modules = sys.modules if modules is None else modules
    watched = {"numpy": "numpy", "numba": "numba", "ml_dtypes": "ml_dtypes", "cupy": None}
    found = {}
    for module, dist in watched.items():
        if module in modules:
            version = getattr(modules[module], "__version__", None)
            found[dist or f"{module} (imported)"] = version
    return found


def restart_needed(before, installed_version=importlib.metadata.version):
    """Whether a module imported ``before`` the install (:func:`loaded_versions`) now has another
    version on disk, or CuPy was imported at all (its CUDA libraries are already loaded)."""
    for dist, version in before.items():
        if dist.endswith("(imported)"):
            return True
        try:
            if installed_version(dist) != version:
                return True
        except importlib.metadata.PackageNotFoundError:
            return True
    return False


def _pip(arguments):
    subprocess.run([sys.executable, "-m", "pip", *arguments], check=True)


def setup(run=_pip, modules=None, driver=None, cupy=None):
    """On Colab: install the CUDA stack that matches the driver and say whether to restart once.
    Off Colab: nothing (returns None). ``run``, ``driver`` and ``cupy`` are for tests."""
    modules = sys.modules if modules is None else modules
    if "google.colab" not in modules:
        return None
    before = loaded_versions(modules)
    driver = cudastack.driver() if driver is None else driver
    todo = plan(driver, cudastack.installed_cupy() if cupy is None else cupy)
    for command in todo.commands:
        run(command)
    for note in todo.notes:
        print(note)
    if todo.commands and restart_needed(before):
        print(RESTART)
    return todo


# ---------------------------------------------------------------------- the notebooks' two cells

def link(relative_path):
    """The "Open in Colab" address of the notebook at ``relative_path`` in the repository."""
    owner_repo = REPOSITORY.removeprefix("https://github.com/")
    return f"https://colab.research.google.com/github/{owner_repo}/blob/{BRANCH}/{relative_path}"


def cells(relative_path):
    """The link cell and the set-up cell that start the notebook at ``relative_path``."""
    import nbformat
    badge = f"[![Open in Colab]({BADGE})]({link(relative_path)})"
    link_cell = nbformat.v4.new_markdown_cell(badge, id=LINK_ID)
    setup_cell = nbformat.v4.new_code_cell(SETUP_CELL, id=CELL_ID)
    return link_cell, setup_cell


def write(folders, root=Path(".")):
    """Put (or refresh) the two cells at the top of every notebook of ``folders``; outputs stay
    cleared. Returns the notebooks changed."""
    import nbformat
    changed = []
    for folder in folders:
        for path in sorted((Path(root) / folder).glob("[0-9][0-9]*_*.ipynb")):  # 12b: part 2
            nb = nbformat.read(path, as_version=4)
            relative = path.resolve().relative_to(Path(root).resolve()).as_posix()
            # solutions/ is the source of exercises/ (gemmlab assign): students open the exercise
            relative = relative.replace("solutions/", "exercises/", 1)
            kept = [c for c in nb.cells if c.get("id") not in (LINK_ID, CELL_ID)]
            wanted = [*cells(relative), *kept]
            if [(c.cell_type, c.source, c.get("id")) for c in wanted] != \
                    [(c.cell_type, c.source, c.get("id")) for c in nb.cells]:
                nb.cells = wanted
                nbformat.write(nb, path)
                changed.append(path)
    return changed


def metadata_lines():
    """{file: [(pattern of a line, the line it must be)]}: the copies of :data:`REPOSITORY` in the
    package's metadata (pyproject.toml's [project.urls], CITATION.cff)."""
    return {
        "pyproject.toml": [(r'^Repository = ".*"$', f'Repository = "{REPOSITORY}"'),
                           (r'^Changelog = ".*"$',
                            f'Changelog = "{REPOSITORY}/blob/{BRANCH}/CHANGELOG.md"')],
        "CITATION.cff": [(r'^repository-code: ".*"$', f'repository-code: "{REPOSITORY}"')],
    }


def write_metadata(root=Path(".")):
    """Put :data:`REPOSITORY` into pyproject.toml and CITATION.cff under ``root``. Returns the files
    changed; a RuntimeError when a file lacks the line to rewrite (or has it twice)."""
    changed = []
    for name, lines in metadata_lines().items():
        path = Path(root) / name
        text = new = path.read_text(encoding="utf-8")
        for pattern, line in lines:
            new, count = re.subn(pattern, lambda _, line=line: line, new, flags=re.M)
            if count != 1:
                raise RuntimeError(f"{path}: expected one line matching {pattern}, found {count}")
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(path)
    return changed


if __name__ == "__main__":
    for changed_path in write(sys.argv[1:] or ["notebooks", "solutions"]) + write_metadata():
        print(f"wrote {changed_path}")
