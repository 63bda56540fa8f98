"""Judge a student's code in a process of its own: ``judge_code``.

    result = judge_code("02.naive_matmul", source, "naive_matmul", seed=1234)

runs the cell ``source`` in a fresh, limited Python process (:mod:`gemmlab.judging.worker`,
after the fixed preamble ``import math; import numpy as np; import gemmlab as gl; from numba
import float32, int32; cuda = gl.device.cuda()``, with ``check`` a no-op and the question's
forbidden names out of reach) and judges the function ``name`` it defines with the question's
kind, here, in the calling process (:func:`gemmlab.judging.cell.judge_cell`): the kind gets a
stand-in that forwards each call, or each run helper of the package (an instrumented simulator,
simulated ranks: :func:`gemmlab.judging.where.where_it_lives`), to the worker and brings back
plain data. References, seeds, hidden cases and comparisons never enter the process that runs the
student's code, and what that code writes into its arguments stays there. Whatever the code does
there (raise, loop, crash, print, exit, patch the package) ends as a FAIL with the reason.
``seed`` None judges the public cases (what the notebook's ``check()`` shows), an integer the
hidden cases drawn from ``np.random.default_rng(seed)``. A notebook's ``check()`` runs the same
judging with a plain child process instead of this confined one.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field

import numpy as np

from gemmlab.grading.bank import get_question
from gemmlab.grading.checker import Result
from gemmlab.judging.cell import WORKER, Channel, describe_exit, judge_cell
from gemmlab.labs import compile as compile_

from . import confine, sandbox

# Starts Python on a given copy of gemmlab and the grader (both packages in one folder, see
# integrity.PackageSnapshot.write_copy): -I ignores PYTHONPATH and user site-packages, and the
# module search path is then set to the grader's own (passed in argv, one entry per line), so the
# untrusted process imports the same libraries the grader does, also when they came from
# PYTHONPATH (an offline GPU machine's --target folder). The editable install's import hook
# (which would find the repository's packages first) is removed and the copy put first on
# sys.path. Then it runs a module as __main__.
BOOT = """import sys
root, search, module = sys.argv[1], sys.argv[2].splitlines(), sys.argv[3]
sys.argv = [module] + sys.argv[4:]
sys.path[:] = [p for p in search if p] + [p for p in sys.path if p not in search]
if root:
    sys.meta_path[:] = [f for f in sys.meta_path if "gemmlab" not in getattr(f, "__module__", "")]
    sys.path_hooks[:] = [h for h in sys.path_hooks if "gemmlab" not in getattr(h, "__module__", "")]
    sys.path_importer_cache.clear()
    sys.path.insert(0, root)
    import gemmlab, gemmlab_grader
    for package in (gemmlab, gemmlab_grader):
        if not package.__file__.startswith(root):
            raise SystemExit(f"{package.__name__} was imported from {package.__file__}, not {root}")
import runpy
runpy.run_module(module, run_name="__main__", alter_sys=True)
"""


def python_argv(package_root, module, *args):
    """argv that runs ``python -m module args`` with gemmlab and the grader from
    ``package_root`` ("" = the ones this process imports), on this process's module search
    path."""
    search = "\n".join(p for p in sys.path if p)
    # -B: -I also ignores PYTHONDONTWRITEBYTECODE; a confined process writes no bytecode into the
    # Python it shares with the grader (outside the sandbox, with --trusted, it could)
    return [sys.executable, "-I", "-B", "-c", BOOT, str(package_root or ""), search, module,
            *map(str, args)]


def clean_env(workdir):
    """The whole environment an untrusted process gets: nothing of the caller's but PATH and the
    locale (no tokens, no GEMMLAB_* settings), every cache and config dir inside ``workdir``, and
    the simulator backend (the kernel labs' instrumented checks run there, on a GPU machine
    too), and one thread for the numerical libraries: a class is graded ``--jobs`` notebooks
    at a time, and a BLAS or OpenMP pool per notebook the size of the machine would only
    oversubscribe its cores."""
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL")}
    env.update({f"{pool}_NUM_THREADS": "1" for pool in ("OMP", "OPENBLAS", "MKL", "NUMBA")})
    env.update(HOME=str(workdir), TMPDIR=str(workdir), GEMMLAB_BACKEND="sim", MPLBACKEND="Agg",
               NUMBA_CACHE_DIR=f"{workdir}/.numba", MPLCONFIGDIR=f"{workdir}/.mpl",
               IPYTHONDIR=f"{workdir}/.ipython", JUPYTER_RUNTIME_DIR=f"{workdir}/.jupyter",
               JUPYTER_CONFIG_DIR=f"{workdir}/.jupyter", JUPYTER_DATA_DIR=f"{workdir}/.jupyter",
               PYTHONDONTWRITEBYTECODE="1", PYTHONHASHSEED="0")
    return env


@dataclass(frozen=True)
class Isolation:
    """Where :func:`judge_code` runs the student's code. The default (the installed packages,
    limits, no sandbox) suits a trial by hand or a test; the grader passes its own: the package
    copy without references, and the bubblewrap sandbox when asked for."""
    package_root: str = ""
    limits: confine.Limits = field(default_factory=confine.Limits)
    sandbox: bool = False
    hidden_paths: tuple = ()

    def __post_init__(self):
        if self.sandbox and not self.package_root:
            raise ValueError("the sandbox mounts no repository: give it a package copy "
                             "(package_root), e.g. PackageSnapshot().write_copy(folder)")


def start_confined(isolation, workdir, module, *args, **streams):
    """Start ``python -m module args`` as ``isolation`` says (its package copy, limits, sandbox),
    in ``workdir`` with :func:`clean_env`; ``streams``: Popen's stdin/stdout/stderr. Returns the
    :class:`~gemmlab_grader.confine.Tree`. The sandbox mounts the package copy read-only and an
    empty memory file system over ``workdir`` (so the copy must lie outside it)."""
    argv = python_argv(isolation.package_root, module, *args)
    if isolation.sandbox:
        root = isolation.package_root
        if sandbox.is_inside(root, workdir):
            raise ValueError("in the sandbox the work folder starts empty: put the package copy "
                             "outside it")
        argv = sandbox.command(argv, workdir, [root], isolation.hidden_paths,
                               memory_bytes=isolation.limits.memory_bytes)
    return confine.Tree(argv, isolation.limits, cwd=workdir, env=clean_env(workdir), **streams)


def said(log):
    """"; it said: <the last 600 bytes of ``log``>" (a process's stderr, for the reason it
    died), or "" when the log is empty or closed."""
    try:
        log.seek(0)
        tail = log.read()[-600:].decode("utf-8", "replace").strip()
    except (OSError, ValueError):
        return ""
    return f"; it said: {tail}" if tail else ""


class Worker:
    """One confined worker process (:mod:`gemmlab.judging.worker`) and its frame channel, with a
    deadline for everything it does; its stderr goes to a log whose tail says why it died."""

    def __init__(self, isolation, timeout):
        self.workdir = tempfile.mkdtemp(prefix="gemmlab-code-")
        self.log = open(os.path.join(self.workdir, "worker.log"), "w+b")
        self.tree = start_confined(isolation, self.workdir, WORKER, stdin=-1, stdout=-1,
                                   stderr=self.log)
        self.channel = Channel(self.tree.popen, timeout, self.tree.kill, lambda: said(self.log))

    def close(self):
        self.channel.close()
        self.log.close()
        try:
            shutil.rmtree(self.workdir)   # in the sandbox the code wrote on a tmpfs over it
        except OSError:
            pass


class ConfinedCompiler:
    """A kernel's compile in a compiler child of its own, confined as ``isolation`` says (the
    sandbox in a grading run), so that compiling a student's kernel never runs unconfined in the
    grader's process tree."""

    def __init__(self, isolation, timeout):
        self.isolation, self.timeout = isolation, timeout

    def compile(self, request):
        workdir = tempfile.mkdtemp(prefix="gemmlab-compile-")
        try:
            tree = start_confined(self.isolation, workdir, "gemmlab.labs.nvcompile",
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL)
            try:
                out, _ = tree.popen.communicate(json.dumps(request).encode(), timeout=self.timeout)
            except subprocess.TimeoutExpired:
                return compile_.did_not_finish(self.timeout)
            finally:
                tree.kill()
            return compile_.reply_of(out, describe_exit(tree.popen.returncode))
        finally:
            try:
                shutil.rmtree(workdir)
            except OSError:
                pass


def judge_code(question_id, source, name, seed=None, timeout=120.0, *, isolation=None,
               compiler=None):
    """The verdict (a :class:`~gemmlab.grading.checker.Result`) on the function ``name`` defined
    by the cell ``source``, for the code question ``question_id``: its public cases when ``seed``
    is None, else hidden cases drawn here from ``np.random.default_rng(seed)`` (the seed never
    leaves this process). ``timeout``: seconds for everything (start, the cell, every call).
    ``isolation``: how the worker (and the kernel's compiler child) is confined. Never raises for
    the student's code."""
    q = get_question(question_id)
    if not q.is_code:
        raise ValueError(f"{question_id} is not a code question (its kind has no judge method)")
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0:
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    rng = None if seed is None else np.random.default_rng(seed)
    isolation = isolation or Isolation()
    worker = Worker(isolation, timeout)
    worker.channel.compiler = compiler or ConfinedCompiler(isolation, min(timeout,
                                                                          compile_.TIMEOUT))
    try:
        status, feedback = judge_cell(q, source, name, rng, worker.channel)
    finally:
        worker.close()
    return Result(q.id, status, str(feedback)[:4000])


__all__ = ["judge_code", "Isolation", "python_argv", "start_confined", "clean_env"]
