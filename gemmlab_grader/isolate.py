"""Judge a student's code in a process of its own: ``judge_code``.

    result = judge_code("02.naive_matmul", source, "naive_matmul", seed=1234)

runs the cell ``source`` in a fresh, limited Python process (:mod:`gemmlab_grader.worker`,
after the fixed preamble ``import math; import numpy as np; import gemmlab as gl; from numba
import float32, int32; cuda = gl.device.cuda()``, with ``check`` a no-op) and judges the function
``name`` it defines with the question's kind. Whatever the code does there (raise, loop, crash,
print, exit, patch the package) ends as a FAIL with the reason. ``seed`` None judges the public
cases (what the notebook's ``check()`` shows), an integer the hidden cases drawn from
``np.random.default_rng(seed)``. Where the judging happens depends on the kind:

* a kind with ``proxy_judge = True`` (``Function``, the distributed labs: they only call the
  function on data, or hand it to a run helper through
  :func:`gemmlab.judging.where.where_it_lives`) judges here, in the calling process: its
  ``judge(question, fn, rng)`` gets a :class:`RemoteFunction` that forwards each call to the
  worker, so references, hidden cases and comparisons never enter the process that runs the
  student's code;
* any other kind (the kernel labs: a kernel on the instrumented simulator) is looked up in the
  worker's own copy of the package (it must be a module-level constant,
  :func:`gemmlab.judging.where.kind_spec`) and judges there, next to the code, without the
  question's reference. A cell that deliberately tampers with that judging, in its own process,
  can only change its own verdict.

For kinds that do more than call the function (launch a kernel in an instrumented simulator, run
simulated ranks), ``where_it_lives(fn, helper, *args)`` runs a *run helper* of the package next
to the student's code: a :class:`RemoteFunction` implements that protocol with its
``call_helper`` method, so the helper runs in the worker and returns what it returns (numbers,
strings, lists, dicts, NumPy arrays). Array arguments come back with what the code wrote into
them, in both directions, so ``fn[grid, block](A, B, C)`` fills C.
"""
import builtins
import os
import select
import sys
import tempfile
import time
from dataclasses import dataclass, field

import numpy as np

from gemmlab.grading.bank import get_question
from gemmlab.grading.checker import Result, judge_question
from gemmlab.judging import FAIL, NOT_ATTEMPTED, PASS
from gemmlab.judging.beside import public_fields
from gemmlab.judging.where import helper_spec, kind_spec

from . import answers, confine, sandbox
from .folders import remove_tree
from .worker import frame, read_frame

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
    # -B: -I also ignores PYTHONDONTWRITEBYTECODE, and bytecode written into site-packages by an
    # untrusted process would change the environment the grader watches
    return [sys.executable, "-I", "-B", "-c", BOOT, str(package_root or ""), search, module,
            *map(str, args)]


def clean_env(workdir):
    """The whole environment an untrusted process gets: nothing of the caller's but PATH and the
    locale (no tokens, no GEMMLAB_* settings), every cache and config dir inside ``workdir``, and
    the simulator backend (the kernel labs' instrumented checks run there, on a GPU machine
    too)."""
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL")}
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


class StudentCodeError(Exception):
    """The student's code failed in its process; the message says how."""


def _exception(error):
    """An exception to raise here for one the student's code raised there: the builtin class of
    that name if there is one (TypeError, IndexError, ...), otherwise a StudentCodeError named so."""
    name = str(error.get("type", "Exception"))[:60]
    message = str(error.get("message", ""))[:500]
    cls = getattr(builtins, name, None)
    if not (isinstance(cls, type) and issubclass(cls, Exception)):
        safe = "".join(c for c in name if c.isalnum() or c == "_") or "StudentCodeError"
        cls = type(safe if safe.isidentifier() else "StudentCodeError", (StudentCodeError,), {})
    try:
        return cls(message)
    except Exception:  # a builtin exception class with another signature
        return StudentCodeError(f"{name}: {message}")


class Worker:
    """One worker process and its frame channel, with a deadline for everything it does."""

    def __init__(self, isolation, timeout):
        self.timeout = timeout
        self.deadline = time.monotonic() + timeout
        self.failure = None        # set once the process is gone: later calls raise it again
        self.workdir = tempfile.mkdtemp(prefix="gemmlab-code-")
        self.log = open(os.path.join(self.workdir, "worker.log"), "w+b")
        self.tree = start_confined(isolation, self.workdir, "gemmlab_grader.worker",
                                   stdin=-1, stdout=-1, stderr=self.log)

    def request(self, message):
        """Send ``message``, wait for the reply frame (raising what the student's code did)."""
        if self.failure:
            raise self.failure
        try:
            self.tree.popen.stdin.write(frame(message))
            self.tree.popen.stdin.flush()
            reply = self._reply()
        except TimeoutError as exc:
            self.failure = exc
        except (OSError, ValueError) as exc:
            self.failure = StudentCodeError(f"the process running your code broke off ({exc})")
        if self.failure:
            self.close()
            raise self.failure
        return reply

    def _reply(self):
        reply = read_frame(_DeadlineReader(self.tree.popen.stdout, self.deadline, self.timeout))
        if reply is None:
            self.tree.popen.wait(timeout=5)
            why = confine.describe_exit(self.tree.popen.returncode)
            raise OSError(f"it ended: {why}{self._log_tail()}")
        if not isinstance(reply, dict) or not isinstance(reply.get("ok"), bool):
            raise ValueError("a malformed reply")
        return reply

    def _log_tail(self):
        self.log.seek(0)
        tail = self.log.read()[-600:].decode("utf-8", "replace").strip()
        return f"; it said: {tail}" if tail else ""

    def close(self):
        self.tree.kill()
        self.log.close()
        for proc_pipe in (self.tree.popen.stdin, self.tree.popen.stdout):
            try:
                proc_pipe.close()
            except OSError:
                pass
        try:
            remove_tree(self.workdir)     # any depth: the student's code may have made 3000 folders
        except OSError:
            pass


class _DeadlineReader:
    """A pipe read that gives up (TimeoutError) at the deadline."""

    def __init__(self, stream, deadline, timeout):
        self.fd, self.deadline, self.timeout = stream.fileno(), deadline, timeout

    def read(self, n):
        left = self.deadline - time.monotonic()
        if left <= 0 or not select.select([self.fd], [], [], left)[0]:
            raise TimeoutError(f"no answer within {self.timeout:g} s (an endless loop, or a very "
                               f"slow one?)")
        return os.read(self.fd, min(n, 1 << 20))


class RemoteFunction:
    """The student's function, living in the worker: call it, launch it (``fn[grid, block](...)``)
    or hand it to a run helper (``call_helper``, the protocol of
    :func:`gemmlab.judging.where.where_it_lives`); its repr is the one it has there."""

    def __init__(self, worker, text):
        self._worker, self._text = worker, text

    def __repr__(self):
        return self._text

    def __call__(self, *args, **kwargs):
        return self._request(args, kwargs)

    def __getitem__(self, config):
        grid, block = config
        return lambda *args, **kwargs: self._request(args, kwargs, launch=[grid, block])

    def call_helper(self, helper, *args, **kwargs):
        """``helper(fn, *args, **kwargs)`` run in the worker, next to the student's function;
        ``helper`` must be a module-level function of gemmlab."""
        return self._request(args, kwargs, helper=helper_spec(helper))

    def _request(self, args, kwargs, launch=None, helper=None):
        message = {"op": "call", "args": [answers.encode(a) for a in args],
                   "kwargs": {str(k): answers.encode(v) for k, v in kwargs.items()}}
        if launch:
            message["launch"] = [answers.encode(c) for c in launch]
        if helper:
            message["helper"] = helper
        reply = self._worker.request(message)
        if not reply["ok"]:
            raise _exception(reply.get("error") or {})
        try:
            for original, back in zip(args, reply.get("args") or [], strict=True):
                if back is not None and isinstance(original, np.ndarray):
                    np.copyto(original, answers.decode(back), casting="same_kind")
            return answers.decode(reply.get("value"))
        except (answers.DecodeError, ValueError, TypeError) as exc:
            raise StudentCodeError(f"its result could not be read back ({exc})") from None


def judge_code(question_id, source, name, seed=None, timeout=120.0, *, isolation=None):
    """The verdict (a :class:`~gemmlab.grading.checker.Result`) on the function ``name`` defined
    by the cell ``source``, for the code question ``question_id``: its public cases when ``seed``
    is None, else hidden cases drawn from ``np.random.default_rng(seed)``. ``timeout``: seconds
    for everything (start, the cell, every call). Never raises for the student's code."""
    q = get_question(question_id)
    if not q.is_code:
        raise ValueError(f"{question_id} is not a code question (its kind has no judge method)")
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0:
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    rng = None if seed is None else np.random.default_rng(seed)
    worker = Worker(isolation or Isolation(), timeout)
    try:
        loaded, failure = _ask(worker, q, {"op": "load", "source": str(source),
                                           "name": str(name)}, "your cell")
        if failure is not None:
            return failure
        state = loaded.get("state")
        if state in ("missing", "none", "ellipsis"):
            missing = "no " + name if state == "missing" else f"{name} is {state}"
            return Result(q.id, NOT_ATTEMPTED, f"{missing} yet. {q.prompt}")
        if not getattr(q.kind, "proxy_judge", False):
            return _judge_next_to_the_code(worker, q, seed)
        text = str(loaded.get("repr", ""))[:200]
        if loaded.get("callable"):
            answer = RemoteFunction(worker, text)
        else:
            answer = answers.decode({"t": "opaque", "type": loaded.get("type"), "repr": text})
        return judge_question(q, answer, rng)
    finally:
        worker.close()


def _ask(worker, q, message, doing):
    """(reply, None), or (None, a FAIL Result saying how ``doing`` went wrong in the worker)."""
    try:
        reply = worker.request(message)
    except TimeoutError as exc:
        return None, Result(q.id, FAIL, f"{doing} did not finish: {exc}.")
    except StudentCodeError as exc:
        return None, Result(q.id, FAIL, f"{doing} could not be run: {exc}")
    if not reply["ok"]:
        error = reply.get("error") or {}
        return None, Result(q.id, FAIL, f"{doing} raised {str(error.get('type'))[:60]}: "
                                        f"{str(error.get('message'))[:300]}")
    return reply, None


def _judge_next_to_the_code(worker, q, seed):
    reply, failure = _ask(worker, q, {"op": "judge", "kind": kind_spec(q.kind),
                                      "question": public_fields(q), "seed": seed},
                          "checking your code")
    if failure is not None:
        return failure
    status = reply.get("status")
    if status not in (PASS, FAIL, NOT_ATTEMPTED):
        return Result(q.id, FAIL, "the check of your code gave no verdict")
    return Result(q.id, status, str(reply.get("feedback"))[:4000])


__all__ = ["judge_code", "RemoteFunction", "Isolation", "StudentCodeError", "python_argv"]
