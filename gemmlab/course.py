"""Where the course's own files are: the lesson and exercise notebooks and the recorded GPU runs.

In a checkout (a clone, or an editable install) they are the repository's ``notebooks/``,
``exercises/`` and ``benchmarks/``. Installed from a wheel (``pip install``, Colab) they are the
copies that setup.py put inside the package, ``gemmlab/_course/``. Everything that reads them
(``gl.measure.recorded``, ``gemmlab work``) asks here, so both installs find the same files.

An exercise notebook is named after its lesson with ``_exercises`` added
(``exercises/05_tiled_gemm_exercises.ipynb`` for ``notebooks/05_tiled_gemm.ipynb``), so that the
two open in JupyterLab tabs of different names. Before, both had the lesson's name: a student's
file under that former name (:func:`former_exercise_name`) is still that lesson's work.
"""
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
CHECKOUT = PACKAGE.parent
PACKAGED = PACKAGE / "_course"
PARTS = ("notebooks", "exercises", "benchmarks")
EXERCISES_ENDING = "_exercises.ipynb"      # 05_tiled_gemm_exercises.ipynb: lesson 05's exercises


def root():
    """The folder holding ``notebooks/``, ``exercises/`` and ``benchmarks/``: the checkout when
    this package runs from one, else the copy inside the installed package."""
    if all((CHECKOUT / part).is_dir() for part in PARTS) and (CHECKOUT / "pyproject.toml").is_file():
        return CHECKOUT
    return PACKAGED


def path(part):
    """``root() / part`` ("notebooks", "exercises" or "benchmarks"); FileNotFoundError saying what
    is wrong when the install lacks it (a wheel built without setup.py's course step)."""
    if part not in PARTS:
        raise ValueError(f"expected one of {', '.join(PARTS)}, got {part!r}")
    found = root() / part
    if not found.is_dir():
        raise FileNotFoundError(f"this gemmlab install has no {part}/ (looked in {found}): "
                                f"reinstall from the repository or a wheel built by its setup.py")
    return found


def jupyter_settings():
    """The course's Jupyter folder (``jupyter/``: JupyterLab's setting overrides in
    ``labconfig/``, the kernel spec with the course's start-up in ``kernels/``), from the checkout
    or the wheel; FileNotFoundError when this install lacks it."""
    found = root() / "jupyter"
    if not (found / "labconfig").is_dir():
        raise FileNotFoundError(f"this gemmlab install has no Jupyter settings (looked in "
                                f"{found}): reinstall from the repository or a wheel built by its "
                                f"setup.py")
    return found


def former_exercise_name(name):
    """The name the exercise notebook ``name`` had before it got its ``_exercises`` ending: its
    lesson's (``05_tiled_gemm_exercises.ipynb`` -> ``05_tiled_gemm.ipynb``); None for a name
    without that ending (it had no other)."""
    if not name.endswith(EXERCISES_ENDING):
        return None
    return name[:-len(EXERCISES_ENDING)] + ".ipynb"


def current_exercise_name(name):
    """The name the course hands out now for an exercise notebook named ``name`` now or before
    (``05_tiled_gemm.ipynb`` and ``05_tiled_gemm_exercises.ipynb`` ->
    ``05_tiled_gemm_exercises.ipynb``)."""
    if not name.endswith(".ipynb"):
        raise ValueError(f"expected a notebook's name (.ipynb), got {name!r}")
    return name if name.endswith(EXERCISES_ENDING) else name[:-len(".ipynb")] + EXERCISES_ENDING
