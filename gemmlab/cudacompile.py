"""The one way the course compiles CUDA C++: NVRTC, the CUDA run-time compiler, into a cubin for one
GPU architecture, cached on disk. The WMMA kernel, the Hopper ladder and the NVLink ring all come
through here.

Why NVRTC and not nvcc: NVRTC is a library (``libnvrtc``, in NVIDIA's ``nvidia-cuda-nvrtc`` wheel,
which CuPy needs for its own kernels anyway), called in-process through ``cuda-bindings`` (which
numba-cuda installs). It needs no CUDA toolkit, no host C++ compiler and no GPU or driver, so the
same call compiles every kernel for sm_75 ... sm_120 on a student's laptop, in CI and on the GPU
machine. nvcc needs a toolkit install and g++ beside it. The course's .cu files include no headers
for the same reason (each Tensor Core call is written as the PTX instruction it is), so NVRTC alone
builds them.

    built = compile_source(source, "sm_90a", name="hopper_gemm.cu")
    built.cubin, built.log, built.resources()      # machine code, compiler log, per-kernel registers
    path, built = cached_cubin(source, "sm_80")    # the same, on disk (for cupy.RawModule(path=...))

A cubin made by NVRTC of CUDA major version X loads only on a driver of major version >= X:
:func:`check_driver` says so before a load fails with a cryptic error.

Where a CUDA driver is installed, NVRTC 13 assembles through the driver's compute cache
(``~/.nv/ComputeCache``): PTX assembled once before comes back without ptxas' report, so
:meth:`Built.resources` finds no kernels. ``CUDA_CACHE_DISABLE=1`` in the environment before CUDA
starts keeps the report (measured on the H200, driver 580.159.04, NVRTC 13.0; the test suite sets
it). Machines without a driver always get the report.
"""
import functools
import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

INSTALL_HINT = ("pip install nvidia-cuda-nvrtc (CUDA 13 drivers) or nvidia-cuda-nvrtc-cu12 "
                "(CUDA 12 drivers)")


class CompileError(RuntimeError):
    """NVRTC refused the source; the message ends with the compiler's own words."""


def arch_name(cc, specific=False):
    """NVRTC's name of compute capability ``cc`` (a pair): (9, 0) -> "sm_90", or "sm_90a" with
    ``specific`` (the architecture-specific features: Hopper's wgmma and setmaxnreg)."""
    major, minor = cc
    return f"sm_{major}{minor}" + ("a" if specific else "")


def parse_arch(arch):
    """(major, minor, specific) of "sm_90a" and the like."""
    m = re.fullmatch(r"sm_(\d+)(\d)(a?)", arch)
    if not m:
        raise ValueError(f"expected an architecture like 'sm_80' or 'sm_90a', got {arch!r}")
    return int(m.group(1)), int(m.group(2)), bool(m.group(3))


@functools.lru_cache(maxsize=None)
def _nvrtc():
    from cuda.bindings import nvrtc    # installed with numba-cuda; loads libnvrtc on first use
    return nvrtc


def version():
    """NVRTC's (major, minor), or None when the library cannot be found."""
    try:
        err, major, minor = _nvrtc().nvrtcVersion()
    except Exception:   # noqa: BLE001 - ImportError, or libnvrtc not found: both mean "none here"
        return None
    return (major, minor) if int(err) == 0 else None


def available():
    """(True, "NVRTC 13.5") when CUDA C++ can be compiled here, else (False, why and what to do)."""
    v = version()
    if v is None:
        return False, f"NVRTC (libnvrtc) was not found: {INSTALL_HINT}"
    return True, f"NVRTC {v[0]}.{v[1]}"


@dataclass(frozen=True)
class Built:
    """What one compilation produced."""
    cubin: bytes
    log: str                  # NVRTC's log, with ptxas' resource report (-v)
    arch: str
    lowered: dict             # name expression -> mangled kernel name (templates)
    ptx: str = ""             # the PTX the cubin was assembled from

    def resources(self):
        return kernel_resources(self.log)


_ENTRY = re.compile(r"Compiling entry function '(\w+)' for '(\w+)'(.*?)(?=Compiling entry|\Z)", re.S)


def kernel_resources(log):
    """{kernel: {"regs", "spill_stores", "spill_loads", "stack_bytes"}} from a ptxas -v report."""
    found = {}
    for name, _, body in _ENTRY.findall(log):
        def number(pattern, body=body):
            m = re.search(pattern, body)
            return int(m.group(1)) if m else 0
        found[name] = {"regs": number(r"Used (\d+) registers"),
                       "spill_stores": number(r"(\d+) bytes spill stores"),
                       "spill_loads": number(r"(\d+) bytes spill loads"),
                       "stack_bytes": number(r"(\d+) bytes stack frame")}
    return found


def _check(result, what):
    err, *rest = result if isinstance(result, tuple) else (result,)
    if int(err) != 0:
        raise CompileError(f"NVRTC {what} failed: {err}")
    return rest[0] if len(rest) == 1 else rest


def compile_source(source, arch, name="kernel.cu", options=(), name_expressions=()):
    """Compile CUDA C++ ``source`` for ``arch`` ("sm_80", "sm_90a", ...) into a :class:`Built`.
    ``name_expressions`` (e.g. "ring<float>") are template kernels whose mangled names are wanted.
    Raises :class:`CompileError` with the compiler's log when the source does not compile."""
    parse_arch(arch)
    ok, why = available()
    if not ok:
        raise CompileError(why)
    nvrtc = _nvrtc()
    prog = _check(nvrtc.nvrtcCreateProgram(source.encode(), name.encode(), 0, [], []),
                  "CreateProgram")
    try:
        for expr in name_expressions:
            _check(nvrtc.nvrtcAddNameExpression(prog, expr.encode()), "AddNameExpression")
        opts = [f"--gpu-architecture={arch}".encode(), b"-std=c++17", b"--ptxas-options=-v",
                *[o.encode() for o in options]]
        err, = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
        size = _check(nvrtc.nvrtcGetProgramLogSize(prog), "GetProgramLogSize")
        log = b" " * size
        nvrtc.nvrtcGetProgramLog(prog, log)
        log = log.rstrip(b"\x00 ").decode(errors="replace")
        if int(err) != 0:
            raise CompileError(f"{name} does not compile for {arch}:\n{log[-4000:]}")
        size = _check(nvrtc.nvrtcGetPTXSize(prog), "GetPTXSize")
        ptx = b" " * size
        _check(nvrtc.nvrtcGetPTX(prog, ptx), "GetPTX")
        size = _check(nvrtc.nvrtcGetCUBINSize(prog), "GetCUBINSize")
        binary = b" " * size
        _check(nvrtc.nvrtcGetCUBIN(prog, binary), "GetCUBIN")
        lowered = {e: _check(nvrtc.nvrtcGetLoweredName(prog, e.encode()), "GetLoweredName").decode()
                   for e in name_expressions}
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
    return Built(binary, log, arch, lowered, ptx.rstrip(b"\x00").decode(errors="replace"))


def cache_root():
    """Where gemmlab keeps what it compiled: $XDG_CACHE_HOME/gemmlab, else ~/.cache/gemmlab."""
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(root) / "gemmlab"


def cache_dir():
    """Where compiled kernels are kept (:func:`cache_root`/cubin)."""
    path = cache_root() / "cubin"
    path.mkdir(parents=True, exist_ok=True)
    return path


def cached_cubin(source, arch, name="kernel.cu", options=(), name_expressions=()):
    """(path of the cubin, its :class:`Built` metadata with an empty ``cubin``): compiled once per
    source, architecture, options and NVRTC major version (a cubin loads on any driver of that
    major version), then read from :func:`cache_dir`."""
    major = (version() or (None,))[0]
    key = hashlib.sha256(json.dumps([source, arch, list(options), list(name_expressions),
                                     major]).encode()).hexdigest()[:20]
    stem = f"{Path(name).stem}_{arch}_{key}"
    path, meta = cache_dir() / f"{stem}.cubin", cache_dir() / f"{stem}.json"
    if path.exists() and meta.exists():
        info = json.loads(meta.read_text())
        return path, Built(b"", info["log"], arch, info["lowered"])
    built = compile_source(source, arch, name, options, name_expressions)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")      # whole files only: other processes read it
    tmp.write_bytes(built.cubin)
    os.replace(tmp, path)
    meta_tmp = meta.with_suffix(f".{os.getpid()}.tmp")
    meta_tmp.write_text(json.dumps({"log": built.log, "lowered": built.lowered}))
    os.replace(meta_tmp, meta)
    return path, built


def check_driver(driver_version):
    """None when cubins of this NVRTC load on a driver reporting ``driver_version`` (e.g. 13000
    from cuDriverGetVersion), else the reason and the fix."""
    v = version()
    if v is None or driver_version is None:
        return None
    if driver_version // 1000 < v[0]:
        return (f"NVRTC {v[0]}.{v[1]} builds kernels a CUDA {driver_version // 1000}.x driver "
                f"cannot load: update the driver, or install the NVRTC of your driver's CUDA "
                f"({INSTALL_HINT})")
    return None
