"""Judge a student's code in a process of its own: ``judge_code("02.naive_matmul", source,
"naive_matmul", seed=1234)`` runs the cell ``source`` in a fresh, confined worker
(:mod:`gemmlab.judging.worker`) and judges the function ``name`` here with the question's kind
(:func:`gemmlab.judging.cell.judge_cell`): references, seeds, hidden cases and comparisons never
enter the worker, and whatever the code does there ends as a FAIL with the reason. ``seed`` None
judges the public cases, an integer hidden cases drawn from ``np.random.default_rng(seed)``.
"""
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field, replace

import numpy as np

from gemmlab.grading.bank import get_question
from gemmlab.grading.checker import Result
from gemmlab.judging import runtime
from gemmlab.judging.cell import WORKER, Channel, describe_exit, judge_cell
from gemmlab.judging.verdict import tallied
from gemmlab.labs import compile as compile_

from . import sandbox

# Runs a module as __main__ on a given copy of gemmlab and the grader (both in one folder): -I
# ignores PYTHONPATH and user site-packages, so the module search path is set to the grader's
# own (argv, one entry per line: the same libraries, also those of an offline machine's
# PYTHONPATH); the editable install's import hook is removed and the copy put first.
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
    """argv of ``python -m module args`` with gemmlab and the grader from ``package_root`` ("":
    this process's), on this process's module search path; -B: no bytecode written into the
    Python it shares with the grader."""
    search = "\n".join(p for p in sys.path if p)
    return [sys.executable, "-I", "-B", "-c", BOOT, str(package_root or ""), search, module,
            *map(str, args)]


def clean_env(workdir):
    """The whole environment of an untrusted process: only PATH and the locale of the caller's
    (no tokens, no GEMMLAB_*), every cache and config folder in ``workdir``, the simulator
    backend, and one thread per numerical library (``--jobs`` notebooks share the cores)."""
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
    """How a student's process is started: which package copy it imports ("": the installed
    packages), its limits, and whether in the sandbox (which needs a copy, and hides
    ``hidden_paths``)."""
    package_root: str = ""
    limits: sandbox.Limits = field(default_factory=sandbox.Limits)
    sandbox: bool = False
    hidden_paths: tuple = ()

    def __post_init__(self):
        if self.sandbox and not self.package_root:
            raise ValueError("the sandbox mounts no repository: give it a package copy "
                             "(package_root), e.g. PackageSnapshot().write_copy(folder)")


def start_confined(isolation, workdir, module, *args, **streams):
    """Start ``python -m module args`` in ``workdir`` (in the sandbox an empty tmpfs) as
    ``isolation`` says, with :func:`clean_env`; ``streams``: Popen's stdin/stdout/stderr. Returns
    the :class:`~gemmlab_grader.sandbox.Tree`."""
    argv = python_argv(isolation.package_root, module, *args)
    if isolation.sandbox:
        argv = sandbox.command(argv, workdir, [isolation.package_root], isolation.hidden_paths,
                               memory_bytes=isolation.limits.memory_bytes)
    return sandbox.Tree(argv, isolation.limits, isolation.sandbox, cwd=workdir,
                        env=clean_env(workdir), **streams)


@dataclass(frozen=True)
class ConfinedCompiler:
    """A kernel's compile in a compiler child of its own, confined as ``isolation`` says, so that
    compiling a student's kernel never runs unconfined in the grader's process tree."""
    isolation: Isolation
    timeout: float

    def compile(self, request):
        """The reply, from the compile cache when this kernel was compiled before (a classmate's
        identical kernel, a regrade): the cache is this trusted process's, never the sandbox's."""
        return compile_.kept_on_disk(request, self._compile_confined)

    def _compile_confined(self, request):
        with tempfile.TemporaryDirectory(prefix="gemmlab-compile-",
                                         ignore_cleanup_errors=True) as folder:
            tree = start_confined(self.isolation, folder, "gemmlab.labs.nvcompile",
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL)
            try:
                out, _ = tree.popen.communicate(json.dumps(request).encode(), timeout=self.timeout)
            except subprocess.TimeoutExpired:
                return compile_.did_not_finish(self.timeout)
            finally:
                tree.kill()
            return compile_.reply_of(out, describe_exit(tree.popen.returncode))


def confined_runtime(isolation):
    """How the answer runtime starts here: under the limits, in the sandbox with no package."""
    def start(argv, folder, env, pass_fds=()):
        if isolation.sandbox:
            argv = sandbox.command(argv, folder, (), isolation.hidden_paths,
                                   memory_bytes=isolation.limits.memory_bytes)
        tree = sandbox.Tree(argv, isolation.limits, isolation.sandbox, cwd=folder, env=env,
                            stdin=-1, stdout=-1, stderr=subprocess.DEVNULL, pass_fds=pass_fds)
        return tree.popen, tree.kill
    return start


def judge_code(question_id, source, name, seed=None, timeout=120.0, *, isolation=None,
               compiler=None):
    """The :class:`~gemmlab.grading.checker.Result` on the function ``name`` of the cell
    ``source`` for the code question ``question_id``, with ``cases`` (right, run) where its
    cases ran (:func:`gemmlab.judging.verdict.tallied`). ``timeout``: seconds for everything;
    ``isolation``: how the worker and the kernel's compiler child are confined. Never raises for
    the student's code."""
    with tallied() as tally:
        result = _judge_code(question_id, source, name, seed, timeout, isolation, compiler)
    return replace(result, cases=tuple(tally) or None)


def _judge_code(question_id, source, name, seed, timeout, isolation, compiler):
    q = get_question(question_id)
    if not q.is_code:
        raise ValueError(f"{question_id} is not a code question (its kind has no judge method)")
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0:
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    rng = None if seed is None else np.random.default_rng(seed)
    isolation = isolation or Isolation()
    if runtime.serves(q):
        status, feedback = runtime.judge(q, source, name, rng, timeout, confined_runtime(isolation))
        return Result(q.id, status, str(feedback)[:4000])
    with (tempfile.TemporaryDirectory(prefix="gemmlab-code-", ignore_cleanup_errors=True) as folder,
          open(os.path.join(folder, "worker.log"), "w+b") as log):     # its stderr
        tree = start_confined(isolation, folder, WORKER, stdin=-1, stdout=-1, stderr=log)
        channel = Channel(tree.popen, timeout, tree.kill, lambda: _said(log))
        channel.compiler = compiler or ConfinedCompiler(isolation, min(timeout, compile_.TIMEOUT))
        try:
            status, feedback = judge_cell(q, source, name, rng, channel)
        finally:
            channel.close()
    return Result(q.id, status, str(feedback)[:4000])


def _said(log):
    """"; it said: <the worker's log's last 600 bytes>" (why it died), or "" when there is none."""
    try:
        log.seek(0)
        tail = log.read()[-600:].decode("utf-8", "replace").strip()
    except (OSError, ValueError):
        return ""
    return f"; it said: {tail}" if tail else ""
