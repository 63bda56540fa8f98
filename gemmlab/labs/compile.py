"""A lab kernel is a CUDA kernel: compile it for real GPUs before the simulator runs it.

:func:`compile_kernel` sends the kernel's part of its cell (:func:`.kernel_source.kernel_cell`)
to a compiler (:mod:`gemmlab.labs.nvcompile`: Numba's ``compile_ptx`` with NVIDIA's NVVM, then
``ptxas -v``, no GPU needed): a child of this process, its replies cached by request
(:data:`COMPILES` counts the misses), or the grader's own, a sandboxed child. Both keep their
replies on disk too (:func:`kept_on_disk`), so a kernel is compiled once per machine. :func:`refusal`
words a kernel that does not compile (with the line of the cell), :func:`resources` the figures
of one that does.

Without NVIDIA's compilers (a Mac) a student's check keeps the simulator's verdict and says what
it left to the grader (:func:`gemmlab.platforms.not_checked`); the grader's compiler must work.
"""
import ast
import functools
import hashlib
import importlib.metadata
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np

from .. import cudacompile, doing, platforms
from ..judging import code_of
from ..judging.cell import CellFunction
from .kernel_source import KEPT, PREAMBLE_NAMES, defined, kernel_cell

ARCHS = ((7, 5), (9, 0))          # the lowest GPU the labs target (Turing) and Hopper
TIMEOUT = 240.0
COMPILES = {"count": 0}             # compiles this process asked for (its own cache's misses)
_CACHE = {}                         # request (as JSON) -> reply, for the compiles of this process
SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nvcompile.py")


def argument_types(arguments):
    """The compiler's description of a launch's (name, value) pairs: a C-contiguous array of its
    dtype and rank, or a scalar of its dtype."""
    return [["array", v.dtype.name, v.ndim] if isinstance(v, np.ndarray)
            else ["scalar", np.asarray(v).dtype.name] for _, v in arguments]


def compile_kernel(kernel, arguments, archs=ARCHS):
    """The compiler's reply for ``kernel`` (a function here or a worker's stand-in, which knows its
    cell) launched with ``arguments`` (:func:`argument_types`), on each of ``archs``. Who compiles:
    the stand-in's channel's compiler, else a cached child of this process."""
    source, name = kernel.cell if isinstance(kernel, CellFunction) else code_of(kernel)
    kept, problem = kernel_cell(source, name)
    if problem:
        return {"ok": False, "stage": "cell", "message": problem}
    request = {"source": kept, "name": name, "arguments": arguments,
               "archs": [list(a) for a in archs]}
    compiler = kernel.compiler if isinstance(kernel, CellFunction) else None
    missing = () if compiler is not None else platforms.missing_compilers()
    if "NVVM" in missing:
        return {"ok": True, "archs": {}, "unchecked": missing}
    doing.step(f"compiling for {', '.join(f'sm_{a}{b}' for a, b in archs)}")
    reply = dict(compiler.compile(request) if compiler is not None else _cached(request))
    if reply.get("ok") and missing:
        reply["unchecked"] = missing
    if not reply.get("ok"):
        reply["kept"] = kept            # the lines the complaint's line number refers to
    return reply


def compile_meanwhile(kernel, arguments, archs=ARCHS):
    """A function waiting for :func:`compile_kernel`'s reply. A kernel of this process compiles in
    a thread (its child on one core, the simulator on the other); a worker's stand-in compiles
    now, since its channel carries one request at a time."""
    if isinstance(kernel, CellFunction):
        reply = compile_kernel(kernel, arguments, archs)
        return lambda: reply
    replies = []
    thread = threading.Thread(name="gemmlab-compile", daemon=True, target=lambda: replies.append(
        compile_kernel(kernel, arguments, archs)))
    thread.start()

    def wait():
        thread.join()
        return replies[0] if replies else failure("the compiler did not reply")
    return wait


def failure(message):
    """A reply saying the compiler could not answer (stage "setup"), as every compiler gives it."""
    return {"ok": False, "stage": "setup", "message": message}


def did_not_finish(timeout):
    return failure(f"the compiler did not finish within {timeout:.0f} s")


def reply_of(output, ended):
    """The reply a compiler child wrote on its standard output, or one saying it ended (``ended``:
    how, in words) without one."""
    try:
        reply = json.loads(output)
    except ValueError:
        reply = None
    return reply if isinstance(reply, dict) else failure(
        f"the compiler ended without a reply ({ended})")


def _cached(request):
    """The reply of this process's compiler child (:class:`_CompilerChild`), from this process's
    cache or the disk's (:func:`kept_on_disk`) when the request was compiled before (a failure of
    the compiler itself is not kept)."""
    key = json.dumps(request, sort_keys=True)
    if key in _CACHE:
        return _CACHE[key]
    COMPILES["count"] += 1
    reply = kept_on_disk(request, _compile_in_child)
    if reply.get("stage") != "setup":
        _CACHE[key] = reply
    return reply


def _compile_in_child(request):
    return _SERVER.compile(dict(request, path=[p for p in sys.path if p]))


class _CompilerChild:
    """The compiler child this process keeps (nvcompile ``--serve``): Numba, NVVM and ptxas are
    loaded once, then each kernel costs only its compile. A child that dies or runs past
    :data:`TIMEOUT` is killed, and the next request starts a new one."""

    def __init__(self):
        self.popen, self.lock = None, threading.Lock()

    def compile(self, request):
        with self.lock:
            if self.popen is None or self.popen.poll() is not None:
                self.errors = tempfile.TemporaryFile()
                self.popen = subprocess.Popen(
                    [sys.executable, "-I", "-B", SCRIPT, "--serve"], stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE, stderr=self.errors, text=True,
                    env=dict(os.environ, NUMBA_ENABLE_CUDASIM="0"))
            lines = []
            reader = threading.Thread(daemon=True, target=self._ask, args=(request, lines))
            reader.start()
            reader.join(TIMEOUT)
            if reader.is_alive():
                self.popen.kill()
                return did_not_finish(TIMEOUT)
            if lines and lines[0]:
                return reply_of(lines[0], "")
            self.popen.wait()
            self.errors.seek(0)
            tail = self.errors.read().decode(errors="replace").strip()[-400:]
            return reply_of("", f"exit status {self.popen.returncode}{': ' + tail if tail else ''}")


    def _ask(self, request, lines):
        try:
            self.popen.stdin.write(json.dumps(request) + "\n")
            self.popen.stdin.flush()
        except OSError:
            return                              # it died: its exit status is reported
        lines.append(self.popen.stdout.readline())


_SERVER = _CompilerChild()


def kept_on_disk(request, compile_request):
    """``compile_request(request)``'s reply, kept in :func:`disk_cache_dir` under a hash of the
    request and the compilers' versions, so that another process compiling the same kernel (a
    notebook's kernel after a restart, a test worker, the grader's next worker) reads the reply
    instead of starting NVVM and ptxas again: most of a lab's check is that child's start. A
    failure of the compiler itself (stage "setup") is not kept; a cache that cannot be written
    is not used."""
    path = disk_cache_dir() / (hashlib.sha256(json.dumps(
        [request, _toolchain()], sort_keys=True).encode()).hexdigest()[:32] + ".json")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        pass
    reply = compile_request(request)
    if reply.get("stage") != "setup":
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            part = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.part")
            part.write_text(json.dumps(reply), encoding="utf-8")
            os.replace(part, path)                # whole files only: other processes read them
        except OSError:
            pass
    return reply


def disk_cache_dir():
    """$GEMMLAB_COMPILE_CACHE, else gemmlab's cache folder's labs-compile (~/.cache/gemmlab/...)."""
    return Path(os.environ.get("GEMMLAB_COMPILE_CACHE") or cudacompile.cache_root() / "labs-compile")


@functools.lru_cache(maxsize=1)
def _toolchain():
    """What a reply depends on besides the request: the compile script, and the versions of
    numba, numba-cuda and NVIDIA's compiler wheels (NVVM, ptxas)."""
    versions = sorted({(d.metadata["Name"], d.version) for d in importlib.metadata.distributions()
                       if (d.metadata["Name"] or "").lower().startswith(("numba", "nvidia-",
                                                                         "cuda-"))})
    script = hashlib.sha256(Path(SCRIPT).read_bytes()).hexdigest()
    return [script, versions]


PYTHON_ONLY = ("exec", "eval", "compile", "open", "print_function", "__import__", "getattr",
               "globals", "vars")


def _name_words(name, kept):
    """What to say of a name the kernel uses that the compiler cannot."""
    if name in PYTHON_ONLY:
        return f"`{name}` is Python, not CUDA: a kernel cannot call it"
    if name in ("gl", "gemmlab"):
        return (f"`{name}` (gemmlab) does not exist on the GPU: a kernel uses only numbers, its "
                f"own @cuda.jit functions and the cuda and math modules")
    if name not in PREAMBLE_NAMES.union(*map(defined, ast.parse(kept).body)):
        return (f"`{name}` is not defined in the part of your cell the lab runs ({KEPT}): the "
                f"grader runs this cell alone, so a name from another cell, or one set by a "
                f"statement of another kind, is missing; define it in this cell as a number or a "
                f"@cuda.jit function")
    return (f"`{name}` cannot be used inside a kernel: only numbers, other @cuda.jit functions "
            f"and the cuda and math modules can (a Python function or object does not exist on "
            f"the GPU)")


WORDS = (   # (a pattern of the compiler's message, what to say: words, or a function of the name)
    (r"Unknown attribute '(\w+)' of type array",
     "a GPU array has no attribute `{0}` inside a kernel: a kernel reads and writes elements "
     "(A[i, j]) and may ask for A.shape, nothing of how the array is stored"),
    (r"Unknown attribute '(\w+)' of type (\w+)",
     "`{0}` is not something a kernel can use on a {1}"),
    (r"set_try_status|SETUP_FINALLY",
     "try/except does not exist in a CUDA kernel: guard with an `if` instead"),
    (r"Untyped global name '(\w+)'|name '(\w+)' is not defined", _name_words),
    (r"IMPORT_NAME|(?is:unsupported opcode.*import|import.*unsupported opcode)",
     "an import inside a kernel: a kernel cannot import; import at the top of the cell"),
    (r"Use of unsupported opcode|Unsupported language feature",
     "a Python construct that does not exist in CUDA ({first})"),
    (r"Cannot unify", "a variable holds values of different types on different paths ({first}): "
     "give it one type, e.g. start a float32 sum as float32(0)"),
    (r"Invalid use of|No implementation of function",
     "a call or operation CUDA has no version of, with these types ({first})"))


def _plain(message, kept):
    """The compiler's complaint in words a student can act on: the first of :data:`WORDS` that
    matches, else its first line (``kept``: the source compiled)."""
    first = next((line.strip() for line in message.splitlines()
                  if line.strip() and not line.startswith(("Failed in ", "During:"))),
                 message.strip())
    for pattern, words in WORDS:
        found = re.search(pattern, message)
        if found:
            groups = [g for g in found.groups() if g is not None]
            return (words(groups[0], kept) if callable(words)
                    else words.format(*groups, first=first))
    return first[:300]


def refusal(reply, kept=""):
    """The FAIL message for a compiler reply that is not ok (``kept``: the source compiled)."""
    stage, message = reply.get("stage"), str(reply.get("message", ""))
    if stage == "setup":
        return (f"your kernel could not be compiled for a GPU: the compiler is not usable here "
                f"({message[:300]}). Install the course's packages "
                f"(`make venv`, or `pip install 'numba-cuda[cu13]' nvidia-cuda-nvcc`).")
    if stage == "cell":
        return message if message.endswith(".") else message + "."
    lines, line, arch = kept.splitlines(), reply.get("line"), reply.get("arch", "")
    where = (f" (line {line}: `{lines[line - 1].strip()[:100]}`)"
             if line and 0 < line <= len(lines) else "")
    if stage == "ptxas":
        return (f"your kernel compiles but cannot launch on a GPU ({arch}){where}: {message}. "
                f"ptxas, NVIDIA's assembler, refuses it or reports it beyond what the GPU allows.")
    return (f"your kernel does not compile for a GPU ({arch}){where}: "
            f"{_plain(message, kept)}. A lab kernel must be a CUDA kernel: the lab compiles it "
            f"with Numba's CUDA compiler before running it.")


def resources(reply):
    """'What ptxas reports for your kernel: sm_75 40 registers per thread, no spills, 2048 bytes
    of shared memory per block; sm_90 ...', or "" for a reply without figures (or without ptxas:
    what was not checked)."""
    if reply.get("unchecked"):
        return platforms.not_checked(reply["unchecked"])
    parts = []
    for arch, figures in (reply.get("archs") or {}).items():
        if "registers" not in figures:
            parts.append(f"{arch}: {figures.get('ptxas', 'no figures')}")
            continue
        spilled = ("no spills" if not figures["spill_stores"] + figures["spill_loads"] else
                   f"{figures['spill_stores']} bytes spilled to local memory and "
                   f"{figures['spill_loads']} read back")
        parts.append(f"{arch} {figures['registers']} registers per thread, {spilled}, "
                     f"{figures['shared_bytes']} bytes of shared memory per block")
    return ("What ptxas reports for your kernel: " + "; ".join(parts) + ".") if parts else ""
