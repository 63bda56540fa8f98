"""A lab kernel is a CUDA kernel: compile it for real GPUs before the simulator runs it.

:func:`compile_kernel` (on the judging side: it reads the kernel's cell, here or from the
worker's stand-in) hands the kernel's part of its cell
(:func:`gemmlab.labs.kernel_source.kernel_cell`) to a child Python
(:mod:`gemmlab.labs.nvcompile`) that compiles it with Numba's own CUDA compiler
(``numba.cuda.compile_ptx``, NVVM from NVIDIA's wheels) for each architecture the lab names, and
runs ``ptxas -v`` on the PTX: registers, spills, shared memory per block, what the kernel would
use on that GPU. No GPU or driver is needed. A kernel that does not compile (it imports, calls
Python functions, reads an array's internals, ...) never runs: :func:`refusal` says why in plain
words, with the line of the cell. :func:`resources` words the figures for the feedback.

By default each kernel gets a child of its own (what a notebook's ``check()`` does), and its
reply is cached by the request (the kernel's source, its arguments' types, the architectures):
a second check of an unchanged kernel compiles nothing (:data:`COMPILES` counts the compiles).
The grader gives a compiler instead (an object with ``compile(request) -> reply``, passed as
``compiler`` or carried by the worker's channel: a sandboxed child), and its reply is final:
when it cannot answer, the reply says the compiler failed; no other compiler is tried.
"""
import ast
import json
import os
import re
import subprocess
import sys
import threading

import numpy as np

from .. import doing
from ..judging import code_of
from ..judging.cell import CellFunction
from .kernel_source import KEPT, kernel_cell

ARCHS = ((7, 5), (9, 0))          # the lowest GPU the labs target (Turing) and Hopper
CELL = "<your cell>"
TIMEOUT = 240.0
COMPILES = {"count": 0}             # compiler children started by this process (the cache's misses)
_CACHE = {}                         # request (as JSON) -> reply, for the compiles of this process
SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nvcompile.py")


def argument_types(arguments):
    """The compiler's description of a launch's arguments ((name, value) pairs): a C-contiguous
    array of its dtype and rank, or a scalar of its dtype."""
    described = []
    for _, value in arguments:
        if isinstance(value, np.ndarray):
            described.append(["array", value.dtype.name, value.ndim])
        else:
            described.append(["scalar", np.asarray(value).dtype.name])
    return described


def compile_kernel(kernel, arguments, archs=ARCHS, timeout=TIMEOUT, compiler=None):
    """The compiler's reply (plain data, see :mod:`gemmlab.labs.nvcompile`) for ``kernel``,
    launched with arguments described by :func:`argument_types`, on each of ``archs``.
    ``kernel``: a function here or a worker's stand-in (which knows the cell it was loaded
    with); only the kernel's part of that cell is ever sent to a compiler. Who compiles it:
    ``compiler`` (an object with ``compile(request) -> reply``: the grading run's compile
    service), else the stand-in's own (the one its worker's channel carries), else a child of
    this process started for this kernel (what a notebook's ``check()`` does)."""
    source, name = kernel.cell if isinstance(kernel, CellFunction) else code_of(kernel)
    kept, problem = kernel_cell(source, name)
    if problem:
        return {"ok": False, "stage": "cell", "message": problem}
    request = {"source": kept, "name": name, "arguments": arguments,
               "archs": [list(a) for a in archs], "cell": CELL}
    if compiler is None and isinstance(kernel, CellFunction):
        compiler = kernel.compiler
    doing.step(f"compiling for {', '.join(f'sm_{a}{b}' for a, b in archs)}")
    reply = compiler.compile(request) if compiler is not None else _cached(request, timeout)
    reply = dict(reply)
    if not reply.get("ok"):
        reply["kept"] = kept            # the lines the complaint's line number refers to
    return reply


def compile_meanwhile(kernel, arguments, archs=ARCHS):
    """Start :func:`compile_kernel` and return a function that waits for its reply. A kernel of
    this process compiles in a child while the caller goes on (the simulator's run of the cases
    takes one core, the compiler child the other); a worker's stand-in compiles now, since its
    channel carries one request at a time."""
    if isinstance(kernel, CellFunction):
        reply = compile_kernel(kernel, arguments, archs)
        return lambda: reply
    replies = []
    thread = threading.Thread(target=lambda: replies.append(compile_kernel(kernel, arguments, archs)),
                              name="gemmlab-compile", daemon=True)
    thread.start()

    def wait():
        thread.join()
        return replies[0] if replies else failure("the compiler did not reply")
    return wait


def failure(message):
    """A reply saying the compiler could not answer (stage "setup"), as every compiler gives it."""
    return {"ok": False, "stage": "setup", "message": message}


def did_not_finish(timeout):
    """The reply for a compiler stopped after ``timeout`` seconds."""
    return failure(f"the compiler did not finish within {timeout:.0f} s")


def reply_of(output, ended):
    """The reply a compiler child wrote (``output``, its standard output), or one saying it
    ended without one (``ended``: how, in words)."""
    try:
        reply = json.loads(output)
    except ValueError:
        reply = None
    return reply if isinstance(reply, dict) else failure(
        f"the compiler ended without a reply ({ended})")


def _cached(request, timeout):
    """The reply of :func:`_compile_alone`, from the cache when this request was compiled before
    (a reply saying the compiler itself failed is not kept)."""
    key = json.dumps(request, sort_keys=True)
    if key not in _CACHE:
        COMPILES["count"] += 1
        reply = _compile_alone(request, timeout)
        if reply.get("stage") == "setup":
            return reply
        _CACHE[key] = reply
    return _CACHE[key]


def _compile_alone(request, timeout):
    """The reply of a compiler child of this request's own (nvcompile run as a script)."""
    request = dict(request, path=[p for p in sys.path if p])
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="0")
    try:
        done = subprocess.run([sys.executable, "-I", "-B", SCRIPT], input=json.dumps(request),
                              capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return did_not_finish(timeout)
    tail = done.stderr.strip()[-400:]
    return reply_of(done.stdout, f"exit status {done.returncode}{': ' + tail if tail else ''}")


def _line_text(source, line):
    lines = source.splitlines()
    if not line or not 0 < line <= len(lines):
        return ""
    return f" (line {line}: `{lines[line - 1].strip()[:100]}`)"


def _defined(source):
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name.split(".")[0]) for a in node.names)
    return names


def _plain(kind, message, kept):
    """The compiler's complaint in words a student can act on."""
    first = next((line.strip() for line in message.splitlines()
                  if line.strip() and not line.startswith("Failed in ")
                  and not line.startswith("During:")), message.strip())
    attribute = re.search(r"Unknown attribute '(\w+)' of type (\w+)", message)
    if attribute:
        name, of = attribute.groups()
        if of == "array":
            return (f"a GPU array has no attribute `{name}` inside a kernel: a kernel reads and "
                    f"writes elements (A[i, j]) and may ask for A.shape, nothing of how the "
                    f"array is stored")
        return f"`{name}` is not something a kernel can use on a {of}"
    if "set_try_status" in message or "SETUP_FINALLY" in message:
        return "try/except does not exist in a CUDA kernel: guard with an `if` instead"
    untyped = (re.search(r"Untyped global name '(\w+)'", message)
               or re.search(r"name '(\w+)' is not defined", message))
    if untyped:
        name = untyped.group(1)
        if name in ("exec", "eval", "compile", "open", "print_function", "__import__", "getattr",
                    "globals", "vars"):
            return f"`{name}` is Python, not CUDA: a kernel cannot call it"
        if name in ("gl", "gemmlab"):
            return (f"`{name}` (gemmlab) does not exist on the GPU: a kernel uses only numbers, "
                    f"its own @cuda.jit functions and the cuda and math modules")
        if name not in _defined(kept) and name not in ("cuda", "np", "math", "float32", "int32"):
            return (f"`{name}` is not defined in the part of your cell the lab runs ({KEPT}): "
                    f"the grader runs this cell alone, so a name from another cell, or one set "
                    f"by a statement of another kind, is missing; define it in this cell as a "
                    f"number or a @cuda.jit function")
        return (f"`{name}` cannot be used inside a kernel: only numbers, other @cuda.jit "
                f"functions and the cuda and math modules can (a Python function or object "
                f"does not exist on the GPU)")
    if "IMPORT_NAME" in message or "unsupported opcode" in message.lower() and "import" in message.lower():
        return "an import inside a kernel: a kernel cannot import; import at the top of the cell"
    if "Use of unsupported opcode" in message or "Unsupported language feature" in message:
        return f"a Python construct that does not exist in CUDA ({first})"
    if "Cannot unify" in message:
        return (f"a variable holds values of different types on different paths ({first}): give "
                f"it one type, e.g. start a float32 sum as float32(0)")
    if "Invalid use of" in message or "No implementation of function" in message:
        return f"a call or operation CUDA has no version of, with these types ({first})"
    return first[:300]


def refusal(reply, kept=""):
    """The FAIL message for a compiler reply that is not ok (``kept``: the source compiled)."""
    stage = reply.get("stage")
    if stage == "setup":
        return (f"your kernel could not be compiled for a GPU: the compiler is not usable here "
                f"({str(reply.get('message'))[:300]}). Install the course's packages "
                f"(`make venv`, or `pip install 'numba-cuda[cu13]' nvidia-cuda-nvcc`).")
    message = str(reply.get("message", ""))
    if stage == "cell":
        return f"{message}" if message.endswith(".") else f"{message}."
    arch = reply.get("arch", "")
    where = _line_text(kept, reply.get("line"))
    if stage == "ptxas":
        return (f"your kernel compiles but cannot launch on a GPU ({arch}){where}: {message}. "
                f"ptxas, NVIDIA's assembler, refuses it or reports it beyond what the GPU allows.")
    return (f"your kernel does not compile for a GPU ({arch}){where}: "
            f"{_plain(reply.get('kind', ''), message, kept)}. A lab kernel must be a CUDA "
            f"kernel: the lab compiles it with Numba's CUDA compiler before running it.")


def resources(reply):
    """'ptxas: sm_75 40 registers, no spills, 2048 bytes of shared memory per block; sm_90 ...'"""
    parts = []
    for arch, figures in (reply.get("archs") or {}).items():
        if "registers" not in figures:
            parts.append(f"{arch}: {figures.get('ptxas', 'no figures')}")
            continue
        spills = figures["spill_stores"] + figures["spill_loads"]
        spilled = ("no spills" if not spills else
                   f"{figures['spill_stores']} bytes spilled to local memory and "
                   f"{figures['spill_loads']} read back")
        parts.append(f"{arch} {figures['registers']} registers per thread, {spilled}, "
                     f"{figures['shared_bytes']} bytes of shared memory per block")
    return ("What ptxas reports for your kernel: " + "; ".join(parts) + ".") if parts else ""
