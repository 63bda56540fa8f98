"""What can change a verdict, judged by content: a bytecode cache another process compiled from
the same source is no tampering, a forged one is; and what a notebook leaves in /dev/shm goes."""
import importlib.util
import marshal
import os
import py_compile
import subprocess
import sys
from pathlib import Path

from gemmlab_grader import integrity
from gemmlab_grader.integrity import EnvironmentWatch, PackageSnapshot, ShmWatch, faithful_bytecode


def _module(folder, name="mod", text="def allclose(a, b):\n    return a == b\n"):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.py").write_text(text)
    return folder / f"{name}.py"


def _forge(cache, text):
    """Rewrite the cache at ``cache`` with the code of ``text``, keeping its header (the source's
    time and size): what Python would load without looking at the source."""
    data = open(cache, "rb").read()
    code = compile(text, "mod.py", "exec", dont_inherit=True)
    open(cache, "wb").write(data[:16] + marshal.dumps(code))


def test_a_compiled_cache_is_faithful_and_a_forged_one_is_not(tmp_path):
    source = _module(tmp_path)
    cache = py_compile.compile(str(source), doraise=True)
    assert faithful_bytecode(cache)
    _forge(cache, "def allclose(a, b):\n    return True\n")
    assert not faithful_bytecode(cache)
    hashed = py_compile.compile(str(source), doraise=True,
                                invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
    assert faithful_bytecode(hashed)
    source.write_text("x = 2\n")                        # the source changed since
    assert not faithful_bytecode(hashed)


def test_another_pythons_cache_is_never_loaded_here_so_it_does_not_count(tmp_path):
    _module(tmp_path)
    (tmp_path / "__pycache__").mkdir()
    other = tmp_path / "__pycache__" / "mod.cpython-27.pyc"
    other.write_bytes(b"anything")
    assert faithful_bytecode(other)


def test_the_environment_watch_ignores_caches_compiled_by_others_not_forged_ones(tmp_path,
                                                                                monkeypatch):
    lib = tmp_path / "site-packages"
    source = _module(lib)
    watch = EnvironmentWatch(roots=[lib])
    # another process importing the module writes its cache: no tampering
    subprocess.run([sys.executable, "-c", "import mod"], cwd=lib, check=True,
                   env=dict(os.environ, PYTHONPATH=str(lib), PYTHONDONTWRITEBYTECODE=""))
    cache = importlib.util.cache_from_source(str(source))
    assert os.path.exists(cache) and watch.changed() == {}
    _forge(cache, "def allclose(a, b):\n    return True\n")
    assert list(watch.changed()) == [cache]


def test_a_package_cache_compiled_by_another_process_is_kept_a_forged_one_removed(tmp_path):
    pkg = tmp_path / "pkg"
    source = _module(pkg)
    snap = PackageSnapshot([pkg])
    cache = py_compile.compile(str(source), cfile=importlib.util.cache_from_source(str(source)),
                               doraise=True)
    assert snap.restore() == [] and os.path.exists(cache)
    _forge(cache, "def allclose(a, b):\n    return True\n")
    assert snap.restore() == [f"pkg/__pycache__/{os.path.basename(cache)}"]
    assert not os.path.exists(cache)


def test_what_a_notebook_left_in_dev_shm_goes_unless_a_live_process_holds_it(tmp_path):
    shm = tmp_path / "shm"
    shm.mkdir()
    (shm / "old").write_bytes(b"x")
    watch = ShmWatch(str(shm))
    (shm / "left").write_bytes(b"\0" * 4096)
    (shm / "leftdir").mkdir()
    (shm / "leftdir" / "inner").write_bytes(b"\0" * 10)
    (shm / "in_use").write_bytes(b"x")
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time\nf = open(sys.argv[1])\n"
                               "print('ready', flush=True)\ntime.sleep(60)", str(shm / "in_use")],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "ready"
        removed = watch.clean()
    finally:
        holder.kill()
        holder.wait()
    assert sorted(removed) == [("left", 4096), ("leftdir", 10)]
    assert sorted(os.listdir(shm)) == ["in_use", "old"]
    assert watch.clean() == []                          # what stays is known from now on


def test_the_environment_watch_looks_at_what_graded_code_imports_not_the_whole_environment():
    import numpy
    roots = integrity.watched_roots()
    for wanted in (numpy.__path__[0], importlib.util.find_spec("IPython").submodule_search_locations[0],
                   importlib.util.find_spec("numba").submodule_search_locations[0]):
        assert os.path.realpath(wanted) in roots, wanted
    assert any(os.path.realpath(os.__file__).startswith(r + os.sep) for r in roots)  # stdlib
    babel = importlib.util.find_spec("babel")        # JupyterLab's; never imported by grading
    if babel is not None and "babel" not in sys.modules:
        assert os.path.realpath(babel.submodule_search_locations[0]) not in roots
    assert not any(Path(r).name in ("site-packages", "dist-packages") for r in roots)
    assert not any(r.startswith(os.path.realpath(p)) for r in roots for p in integrity.PACKAGES)


def test_a_startup_hook_added_to_a_site_folder_is_a_change(tmp_path, monkeypatch):
    site_folder = tmp_path / "site-packages"
    site_folder.mkdir()
    (site_folder / "old.pth").write_text("")
    monkeypatch.setattr(integrity.site, "getsitepackages", lambda: [str(site_folder)])
    monkeypatch.setattr(integrity.site, "getusersitepackages", lambda: str(tmp_path / "none"))
    watch = EnvironmentWatch(roots=[])
    assert watch.changed() == {}
    (site_folder / "zz_evil.pth").write_text("import os; os.environ['X'] = '1'\n")
    (site_folder / "sitecustomize.py").write_text("print('first')\n")
    assert list(watch.changed()) == [str(site_folder / "sitecustomize.py"),
                                     str(site_folder / "zz_evil.pth")]
