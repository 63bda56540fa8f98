"""Compile a kernel for real GPUs: the child process :mod:`gemmlab.labs.compile` starts.

Run as a script (``python -I -B nvcompile.py``), never imported as part of gemmlab: importing
gemmlab chooses the simulator backend on a machine without a GPU, and the compiler needs Numba's
real CUDA target, which works without a GPU or a driver (NVVM and ptxas come from NVIDIA's
wheels). It reads one JSON request on stdin::

    {"path": [module search path], "source": the kernel's part of the cell, "name": "lab_tiled",
     "arguments": [["array", "float32", 2] | ["scalar", "float32"], ...],
     "archs": [[7, 5], [9, 0]], "cell": "<your cell>"}

runs the source after the course's preamble (without gemmlab), compiles the kernel ``name``
with ``numba.cuda.compile_ptx`` for each architecture, runs ``ptxas -v`` on each PTX, and writes
one JSON reply: ``{"ok": true, "archs": {"sm_75": {"registers", "spill_stores", "spill_loads",
"shared_bytes", "stack_bytes"} | {"ptxas": why not}}}`` or ``{"ok": false, "stage",
"message", "line"}``. ptxas decides too: a kernel it refuses (nonzero exit), or one declaring
more static shared memory than a block may (48 KiB) or using more registers per thread than the
architecture has (255), is ``{"ok": false, "stage": "ptxas", "arch", "message", "line"}``: such a
kernel would not launch on that GPU, whatever the simulator makes of it.
"""
import json
import linecache
import os
import re
import subprocess
import sys
import tempfile
import traceback

PREAMBLE = ("import math\nimport numpy as np\nfrom numba import cuda, float32, int32\n")
PTXAS_LINE = re.compile(r"Used (\d+) registers(?:.*?(\d+) bytes smem)?")
SPILL_LINE = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
TOO_MUCH_SHARED = re.compile(r"too much shared data \((0x[0-9a-fA-F]+) bytes, (0x[0-9a-fA-F]+) max\)")
STATIC_SHARED_LIMIT = 48 * 1024     # static shared memory per block, on every architecture
REGISTER_LIMIT = 255                # registers per thread, sm_75 to sm_90


def _signature(arguments):
    from numba import types
    from numba.np.numpy_support import from_dtype
    import numpy as np
    out = []
    for argument in arguments:
        if argument[0] == "array":
            out.append(types.Array(from_dtype(np.dtype(argument[1])), int(argument[2]), "C"))
        else:
            out.append(from_dtype(np.dtype(argument[1])))
    return tuple(out)


def _cell_line(exc, cell):
    """The line of the cell a compiler error points at (its traceback or its message)."""
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if frame.filename == cell:
            return frame.lineno
    found = re.findall(r'File "' + re.escape(cell) + r'", line (\d+)', str(exc))
    return int(found[-1]) if found else None


def _ptxas(ptx, arch):
    """ptxas -v's figures for one PTX, or {"ptxas": why not}."""
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
    return {"registers": int(used.group(1)), "shared_bytes": int(used.group(2) or 0),
            "stack_bytes": int(spill.group(1)) if spill else 0,
            "spill_stores": int(spill.group(2)) if spill else 0,
            "spill_loads": int(spill.group(3)) if spill else 0}


def _kib(size):
    return f"{size / 1024:g} KiB"


def _shared_words(size, limit=STATIC_SHARED_LIMIT):
    return (f"it needs {_kib(size)} of static shared memory; a block may declare at most "
            f"{_kib(limit)} (cuda.shared.array sizes add up per block)")


def _refused_words(text, status):
    """Why ptxas refused a kernel, in plain words."""
    shared = TOO_MUCH_SHARED.search(text)
    if shared:
        return _shared_words(int(shared.group(1), 16), int(shared.group(2), 16))
    errors = [line.split(":", 1)[-1].strip() for line in text.splitlines() if "error" in line]
    return f"ptxas refused it ({'; '.join(errors)[:300] or f'exit status {status}'})"


def _beyond_limits(figures):
    """Why ``figures`` (one architecture's ptxas reply) describe a kernel that cannot launch, or
    None."""
    if "refused" in figures:
        return figures["refused"]
    if figures.get("shared_bytes", 0) > STATIC_SHARED_LIMIT:
        return _shared_words(figures["shared_bytes"])
    if figures.get("registers", 0) > REGISTER_LIMIT:
        return (f"it uses {figures['registers']} registers per thread; a thread may have at most "
                f"{REGISTER_LIMIT}")
    return None


def _shared_line(source):
    """The line of the cell's first shared-array declaration (what a shared-memory refusal
    points at), or None."""
    for number, line in enumerate(source.splitlines(), 1):
        if "cuda.shared.array" in line:
            return number
    return None


class _Target:
    """The GPU being compiled for, where Numba asks for the current device's."""

    def __init__(self, cc):
        self.compute_capability = cc


def _target(major, minor):
    """Numba compiles a device function for the current device: with no GPU here, for the
    architecture being compiled (the only thing it asks of the device)."""
    from numba.cuda import dispatcher
    dispatcher.get_current_device = lambda: _Target((major, minor))


def compile_request(request):
    os.environ["NUMBA_ENABLE_CUDASIM"] = "0"
    cell, source = str(request.get("cell", "<your cell>")), str(request["source"])
    linecache.cache[cell] = (len(source), None, source.splitlines(True), cell)
    namespace = {"__name__": "__gemmlab_kernel__"}
    try:
        exec(compile(PREAMBLE, "<preamble>", "exec"), namespace)
    except Exception as exc:  # the compiler's own packages are missing
        return {"ok": False, "stage": "setup", "message": f"{type(exc).__name__}: {exc}"}
    try:
        exec(compile(source, cell, "exec"), namespace)
    except Exception as exc:  # the student's kept lines
        return {"ok": False, "stage": "cell", "message": f"{type(exc).__name__}: {exc}",
                "line": _cell_line(exc, cell)}
    kernel = namespace.get(str(request["name"]))
    function = getattr(kernel, "py_func", None)
    if function is None:
        return {"ok": False, "stage": "cell", "message": f"{request['name']} is not a kernel"}
    from numba.cuda import compile_ptx
    signature = _signature(request["arguments"])
    archs = {}
    for major, minor in request["archs"]:
        arch = f"sm_{major}{minor}"
        _target(int(major), int(minor))
        try:
            ptx, _ = compile_ptx(function, signature, cc=(int(major), int(minor)))
        except Exception as exc:  # the compiler's verdict on the student's kernel
            if "libnvvm" in str(exc) or "NVVM" in type(exc).__name__ and "not found" in str(exc):
                return {"ok": False, "stage": "setup", "message": str(exc)[:600]}
            return {"ok": False, "stage": "compile", "arch": arch, "kind": type(exc).__name__,
                    "message": str(exc)[:3000], "line": _cell_line(exc, cell)}
        archs[arch] = _ptxas(ptx, arch)
        why = _beyond_limits(archs[arch])
        if why:
            line = _shared_line(source) if "shared memory" in why else None
            return {"ok": False, "stage": "ptxas", "arch": arch, "message": why, "line": line}
    return {"ok": True, "archs": archs}


def main():
    request = json.loads(sys.stdin.read())
    sys.path[:] = [p for p in request.get("path", []) if isinstance(p, str)] + sys.path
    reply_to = os.fdopen(os.dup(1), "w")
    quiet = os.open(os.devnull, os.O_WRONLY)
    os.dup2(quiet, 1)
    try:
        reply = compile_request(request)
    except Exception as exc:  # anything else: reported, so the lab says what went wrong
        reply = {"ok": False, "stage": "setup", "message": f"{type(exc).__name__}: {exc}"[:600]}
    reply_to.write(json.dumps(reply))
    reply_to.flush()


if __name__ == "__main__":
    main()
