"""Lessons executed once per change: `make test` runs every lesson from top to bottom on the
simulator (tests/test_docs_site_lesson_runs.py) and keeps each executed notebook here; the site
builder takes a kept one instead of executing that lesson again when nothing it depends on changed.

A kept notebook is used only when its key matches: a hash of the lesson's file, every file of the
gemmlab package, the Python version and the installed versions of everything gemmlab requires
(with its extras, but for the tools: :data:`TOOL_EXTRAS`). Any edit to a lesson or to the
package, or another version of one of its dependencies, makes the builder execute the lesson. Both
run a lesson the same way, in :func:`set_environment`'s environment (the simulator;
matplotlib's inline figures, as in JupyterLab), through :func:`gemmlab.notebook_run.execute`.
"""
import functools
import hashlib
import importlib.metadata
import os
import sys
import sysconfig
from pathlib import Path

import nbformat
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "build" / "executed-lessons"      # /build/ is ignored by git
PACKAGE = ROOT / "gemmlab"
KEY = "gemmlab_lesson_run"                          # the notebook metadata entry holding the key
TOOL_EXTRAS = {"dev", "lab", "e2e", "site"}         # gemmlab's extras no lesson's kernel imports
# A lesson runs on the simulator, with no MPLBACKEND (the tests set Agg, which would leave the
# pages without figures): what the builder and the tests change in the environment its kernel gets.
ENVIRONMENT, UNSET = {"GEMMLAB_BACKEND": "sim"}, ("MPLBACKEND",)


def set_environment(setenv, unsetenv):
    """Give this process (whose environment a lesson's kernel inherits) :data:`ENVIRONMENT`
    without :data:`UNSET`, through ``setenv(name, value)`` and ``unsetenv(name)`` (os.environ's,
    or a test's monkeypatch, which undoes them)."""
    for name in UNSET:
        unsetenv(name)
    for name, value in ENVIRONMENT.items():
        setenv(name, value)


def key(lesson):
    """What a run of ``lesson`` depends on, as a hex digest (see the module's docstring)."""
    digest = hashlib.sha256(Path(lesson).read_bytes())
    digest.update(_what_every_lesson_runs_on(PACKAGE).encode())
    return digest.hexdigest()


@functools.lru_cache(maxsize=None)
def _what_every_lesson_runs_on(package):
    """A digest of ``package``'s files, the Python version and :func:`lesson_distributions`:
    computed once per process (a quarter of a second, most of it reading the installed metadata),
    in which neither changes."""
    digest = hashlib.sha256()

    def add(label, data):
        digest.update(f"{label}\0{len(data)}\0".encode())
        digest.update(data)
    for path in sorted(package.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            add(path.relative_to(package).as_posix(), path.read_bytes())
    add("python", sys.version.encode())
    add("installed", "\n".join(f"{name}=={version}" for name, version
                                in sorted(lesson_distributions().items())).encode())
    return digest.hexdigest()


def lesson_distributions():
    """{name: version} of gemmlab and what it requires with its extras that a kernel of a lesson
    may use (not :data:`TOOL_EXTRAS`), down the tree, as installed in site-packages: installing
    the site's or the browser tests' tools changes none of it, unless it changes one of these."""
    site_packages = sorted({sysconfig.get_paths()[name] for name in ("purelib", "platlib")})
    installed = {canonicalize_name(d.metadata["Name"]): d
                 for d in importlib.metadata.distributions(path=site_packages)}
    if "gemmlab" not in installed:
        return {}
    extras = set(installed["gemmlab"].metadata.get_all("Provides-Extra") or ()) - TOOL_EXTRAS
    found, todo = {}, [("gemmlab", extras)]
    while todo:
        name, extras = todo.pop()
        name = canonicalize_name(name)
        if (name, frozenset(extras)) in found or name not in installed:
            continue
        found[name, frozenset(extras)] = installed[name].version
        for text in installed[name].requires or ():
            wanted = Requirement(text)
            if wanted.marker is None or any(wanted.marker.evaluate({"extra": extra})
                                            for extra in {"", *extras}):
                todo.append((wanted.name, wanted.extras))
    return {name: version for (name, _), version in found.items()}


def keep(lesson, executed):
    """Keep the executed notebook of ``lesson`` (written whole, then renamed into place)."""
    FOLDER.mkdir(parents=True, exist_ok=True)
    executed = nbformat.from_dict(executed)
    executed.metadata[KEY] = key(lesson)
    part = FOLDER / f".{Path(lesson).name}.{os.getpid()}.part"
    nbformat.write(executed, part)
    part.replace(FOLDER / Path(lesson).name)


def kept(lesson):
    """The kept executed notebook of ``lesson`` when its key matches today's, else None."""
    try:
        executed = nbformat.read(FOLDER / Path(lesson).name, as_version=4)
    except (OSError, ValueError):
        return None
    if executed.metadata.pop(KEY, None) != key(lesson):
        return None
    return executed
