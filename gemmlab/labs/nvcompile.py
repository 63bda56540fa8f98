"""Compile a kernel for real GPUs: the child process :mod:`gemmlab.labs.compile` starts.

Run as a script (``python -I -B nvcompile.py``), never imported with gemmlab, which would choose
the simulator backend: Numba's real CUDA target needs no GPU or driver (NVVM and ptxas come from
NVIDIA's wheels). It reads one JSON request on stdin (one per line with ``--serve``)::

    {"path": [module search path], "source": the kernel's part of the cell, "name": "lab_tiled",
     "arguments": [["array", "float32", 2] | ["scalar", "float32"], ...], "archs": [[7, 5], ...]}

runs the source after :data:`PREAMBLE`, compiles ``name`` with ``numba.cuda.compile_ptx`` and
runs ``ptxas -v`` for each architecture, and writes one JSON reply: ``{"ok": true, "archs":
{"sm_75": {"registers", "spill_stores", "spill_loads", "shared_bytes", "stack_bytes"} | {"ptxas":
why not}}}`` or ``{"ok": false, "stage", "message", "line", "arch"}``. Stage "ptxas": ptxas
refused the kernel (nonzero exit), or it declares more static shared memory than a block may
(48 KiB) or uses more registers than a thread has (255): it would not launch on that GPU.
"""
import json
import linecache
import os
import re
import subprocess
import sys
import tempfile
import traceback
from types import SimpleNamespace

PREAMBLE = ("import math\nimport numpy as np\nfrom numba import cuda, float32, int32\n")
CELL = "<your cell>"                # the file name the compiler's complaints give the cell
PTXAS_LINE = re.compile(r"Used (\d+) registers(?:.*?(\d+) bytes smem)?")
SPILL_LINE = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill "
                        r"loads")
TOO_MUCH_SHARED = re.compile(r"too much shared data \((0x[0-9a-fA-F]+) bytes, (0x[0-9a-fA-F]+) "
                             r"max\)")
STATIC_SHARED_LIMIT = 48 * 1024     # static shared memory per block, on every architecture
REGISTER_LIMIT = 255                # registers per thread, sm_75 to sm_90


def _signature(arguments):
    import numpy as np
    from numba import types
    from numba.np.numpy_support import from_dtype
    return tuple(types.Array(from_dtype(np.dtype(a[1])), int(a[2]), "C") if a[0] == "array"
                 else from_dtype(np.dtype(a[1])) for a in arguments)


def _cell_line(exc):
    """The line of the cell a compiler error points at (its traceback or its message)."""
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if frame.filename == CELL:
            return frame.lineno
    found = re.findall(r'File "' + re.escape(CELL) + r'", line (\d+)', str(exc))
    return int(found[-1]) if found else None


def _ptxas(ptx, arch):
    """ptxas -v's figures for one PTX, or {"ptxas": why not} (and "refused": why, in words)."""
    try:
        from cuda.pathfinder import find_nvidia_binary_utility
        ptxas = find_nvidia_binary_utility("ptxas")
    except Exception:  # an older cuda-pathfinder, or none
        ptxas = None
    if not ptxas:
        return {"ptxas": "ptxas not found (NVIDIA's nvidia-cuda-nvcc wheel provides it)"}
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "kernel.ptx")
        with open(path, "w") as f:
            f.write(ptx)
        done = subprocess.run([ptxas, "-v", f"-arch={arch}", path, "-o", os.devnull],
                              capture_output=True, text=True, timeout=120)
    text = done.stdout + done.stderr
    if done.returncode != 0:
        return {"refused": _refused_words(text, done.returncode), "ptxas": text.strip()[-400:]}
    used, spill = PTXAS_LINE.search(text), SPILL_LINE.search(text)
    if not used:
        return {"ptxas": "no resource line in ptxas's output"}
    stack, stores, loads = map(int, spill.groups()) if spill else (0, 0, 0)
    return {"registers": int(used.group(1)), "shared_bytes": int(used.group(2) or 0),
            "stack_bytes": stack, "spill_stores": stores, "spill_loads": loads}


def _shared_words(size, limit=STATIC_SHARED_LIMIT):
    return (f"it needs {size / 1024:g} KiB of static shared memory; a block may declare at most "
            f"{limit / 1024:g} KiB (cuda.shared.array sizes add up per block)")


def _refused_words(text, status):
    """Why ptxas refused a kernel, in plain words."""
    shared = TOO_MUCH_SHARED.search(text)
    if shared:
        return _shared_words(int(shared.group(1), 16), int(shared.group(2), 16))
    errors = [line.split(":", 1)[-1].strip() for line in text.splitlines() if "error" in line]
    return f"ptxas refused it ({'; '.join(errors)[:300] or f'exit status {status}'})"


def _beyond_limits(figures):
    """Why one architecture's ptxas figures describe a kernel that cannot launch, or None."""
    if "refused" in figures:
        return figures["refused"]
    if figures.get("shared_bytes", 0) > STATIC_SHARED_LIMIT:
        return _shared_words(figures["shared_bytes"])
    if figures.get("registers", 0) > REGISTER_LIMIT:
        return (f"it uses {figures['registers']} registers per thread; a thread may have at most "
                f"{REGISTER_LIMIT}")
    return None


def _failed(stage, exc_or_message, **more):
    message = exc_or_message if isinstance(exc_or_message, str) else (
        f"{type(exc_or_message).__name__}: {exc_or_message}")
    return {"ok": False, "stage": stage, "message": message[:3000], **more}


def compile_request(request):
    os.environ["NUMBA_ENABLE_CUDASIM"] = "0"
    source = str(request["source"])
    linecache.cache[CELL] = (len(source), None, source.splitlines(True), CELL)
    namespace = {"__name__": "__gemmlab_kernel__"}
    try:
        exec(compile(PREAMBLE, "<preamble>", "exec"), namespace)
    except Exception as exc:  # the compiler's own packages are missing
        return _failed("setup", exc)
    try:
        exec(compile(source, CELL, "exec"), namespace)
    except Exception as exc:  # the student's kept lines
        return _failed("cell", exc, line=_cell_line(exc))
    function = getattr(namespace.get(str(request["name"])), "py_func", None)
    if function is None:
        return _failed("cell", f"{request['name']} is not a kernel")
    from numba.cuda import compile_ptx, dispatcher
    signature, archs = _signature(request["arguments"]), {}
    for major, minor in request["archs"]:
        arch, cc = f"sm_{major}{minor}", (int(major), int(minor))
        # Numba compiles device functions for the current device: with no GPU, this architecture
        dispatcher.get_current_device = lambda cc=cc: SimpleNamespace(compute_capability=cc)
        try:
            ptx, _ = compile_ptx(function, signature, cc=cc)
        except Exception as exc:  # the compiler's verdict on the student's kernel
            if "libnvvm" in str(exc) or "NVVM" in type(exc).__name__ and "not found" in str(exc):
                return _failed("setup", str(exc)[:600])
            return _failed("compile", str(exc), arch=arch, line=_cell_line(exc))
        archs[arch] = _ptxas(ptx, arch)
        why = _beyond_limits(archs[arch])
        if why:     # a shared-memory refusal points at the cell's first shared array
            shared = [n for n, text in enumerate(source.splitlines(), 1)
                      if "cuda.shared.array" in text and "shared memory" in why]
            return _failed("ptxas", why, arch=arch, line=shared[0] if shared else None)
    return {"ok": True, "archs": archs}


def _reply(request):
    try:
        return compile_request(request)
    except Exception as exc:  # anything else: reported, so the lab says what went wrong
        return _failed("setup", f"{type(exc).__name__}: {exc}"[:600])


def main():
    """One request on stdin, one reply on stdout; with ``--serve``, one request per line and one
    reply per line until stdin closes (the child :mod:`gemmlab.labs.compile` keeps, so that
    Numba and NVVM are loaded once per process, not once per kernel). Whatever else writes to
    stdout (a print in the cell) goes to /dev/null."""
    serve = sys.argv[1:] == ["--serve"]
    requests = iter(sys.stdin.readline, "") if serve else [sys.stdin.read()]
    reply_to = os.fdopen(os.dup(1), "w")
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    searched = False
    for line in requests:
        request = json.loads(line)
        if not searched:
            sys.path[:] = [p for p in request.get("path", []) if isinstance(p, str)] + sys.path
            searched = True
        reply_to.write(json.dumps(_reply(request)) + "\n")
        reply_to.flush()


if __name__ == "__main__":
    main()
