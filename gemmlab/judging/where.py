"""Where a student's function lives: here (``check()`` in a notebook), or in another process
behind a stand-in (the grader's proxy, :class:`gemmlab.judging.cell.CellFunction`). The rule,
:func:`where_it_lives`, is duck typing: an object whose type has ``call_helper(helper, *args)``
lives elsewhere, and that method runs ``helper(fn, *args)`` there and returns what it returns
(plain data); anything else is a function here, and the helper runs here. The labs call it for
everything that must run next to the code (an instrumented simulator, simulated ranks). A helper
crosses processes by name, so it must be a module-level function of gemmlab (:func:`helper_spec`),
looked up on the other side with :func:`package_object`.
"""
import importlib


def where_it_lives(fn, helper, *args):
    """``helper(fn, *args)``, run in the process that holds ``fn`` (see the module's docstring).
    The method is looked up on the type, so an attribute a student sets on a plain function
    changes nothing."""
    if callable(getattr(type(fn), "call_helper", None)):
        return fn.call_helper(helper, *args)
    return helper(fn, *args)


def helper_spec(helper):
    """"gemmlab.module:function" naming ``helper``; ValueError unless it is a module-level
    function of gemmlab (the only kind another process can find by name)."""
    spec = f"{helper.__module__}:{helper.__qualname__}"
    if not str(helper.__module__).startswith("gemmlab.") or "<" in helper.__qualname__:
        raise ValueError(f"a run helper must be a module-level function of gemmlab, got {spec}")
    return spec


def package_object(spec):
    """The object ``"gemmlab.module:name"`` names (a run helper); ValueError unless it lies in the
    gemmlab package. (A lookup by a name the caller gives, at run time: no module of this package
    depends on another through it.)"""
    module, _, qualname = str(spec).partition(":")
    if not module.startswith("gemmlab.") or not qualname or "<" in qualname:
        raise ValueError(f"not a module-level object of gemmlab: {spec!r}")
    target = importlib.import_module(module)
    for part in qualname.split("."):
        target = getattr(target, part)
    return target
