"""Figures and widgets used by the notebooks, one module per topic (``gemmlab.viz.bits``, ...).

A package rather than one ``viz.py`` because every lesson adds its own figures; each topic module
imports matplotlib and ipywidgets only when it is used. Topic modules load on first attribute
access, so ``gl.viz.ring.RingStepper(...)`` works without an ``import gemmlab.viz.ring`` first.
"""
import importlib
import pkgutil

_SUBMODULES = {m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")}


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'gemmlab.viz' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | _SUBMODULES)
