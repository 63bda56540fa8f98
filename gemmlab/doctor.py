"""``gemmlab doctor``: what the course will run on, one line per check, never a traceback.

Each check returns (label, text) lines; a check that fails unexpectedly prints its error in one
line and the others still run. The order: the backend and why, the GPU, the driver's CUDA against
CuPy's, the CUDA compilers (NVVM for numba's kernels, NVRTC for CuPy's, ptxas for register
counts), the Tensor Core paths, MPI, bubblewrap and Chromium, then package versions and the
lesson sizes.
"""
import shutil
import sys

from . import cudastack, device


def backend():
    try:
        name = device.backend()
    except (RuntimeError, ValueError) as exc:
        return [("backend", f"cannot start: {exc}")]
    return [("backend", f"{name} ({device.why()})")]


def gpu():
    spec = device.spec()
    if spec is None:
        return [("gpu", "none visible")]
    return [("gpu", spec.describe()[0]), ("", spec.describe()[1]), ("", spec.describe()[3])]


def cuda_versions():
    driver = cudastack.driver()
    ok, text = cudastack.check(driver)
    shown = f"CUDA {driver[0]}.{driver[1]}" if driver else "none"
    return [("driver", shown), ("cupy vs driver", ("" if ok else "PROBLEM: ") + text)]


def compilers():
    """NVVM (numba-cuda compiles the kernels), NVRTC (CuPy's and the Tensor Core kernels), ptxas
    (register counts and the compile tests): where cuda-pathfinder finds them, or what is missing."""
    if sys.platform == "darwin":        # NVIDIA publishes none: nothing to install
        return [(name, "none on macOS (NVIDIA publishes no CUDA wheels for it): the labs' checks "
                       "say what they did not check, and the grader checks it")
                for name in ("nvvm", "nvrtc", "ptxas")]
    try:
        import cuda.pathfinder as finder
    except ImportError:
        return [("compilers", "cuda-pathfinder is missing (it comes with numba-cuda): "
                              "pip install numba-cuda")]
    fix = f"pip install 'gemmlab[{cudastack.extra_for(cudastack.driver()) or 'cuda12'}]'"
    lines = []
    for lib in ("nvvm", "nvrtc"):
        try:
            lines.append((lib, f"found ({finder.load_nvidia_dynamic_lib(lib).abs_path})"))
        except Exception as exc:  # noqa: BLE001 - every failure to load means "not usable here"
            lines.append((lib, f"not found ({type(exc).__name__}): {fix}"))
    ptxas = finder.find_nvidia_binary_utility("ptxas")
    lines.append(("ptxas", f"found ({ptxas})" if ptxas else f"not found: {fix}"))
    return lines


def tensor_cores():
    """The CUDA C++ compiler of the Tensor Core kernels, then each Tensor Core path (WMMA FP16 and
    BF16, the Hopper ladder) on the GPU in use: runs, or why not (``gl.tensorcore.paths``)."""
    from .tensorcore import paths
    spec = device.spec()
    first, *rest = paths.report(spec.compute_capability if spec else None, device.backend())
    return [("tensor cores", first)] + [("", line) for line in rest]


def mpi():
    from .collectives import jobs
    missing = jobs.mpi_missing()
    if missing:
        return [("mpi", f"{missing}: lessons 07, 09 and 14 skip their MPI cells. Install MPI with "
                        f"{jobs.HOW_TO_GET_MPI}")]
    return [("mpi", f"mpi4py {device.package_version('mpi4py')}, {jobs.mpiexec_path()}")]


def tools():
    bwrap, chromium = shutil.which("bwrap"), shutil.which("chromium")
    return [("bubblewrap", bwrap or "not found: apt-get install bubblewrap (for gemmlab grade --sandbox)"),
            ("chromium", chromium or "not found: apt-get install chromium (for make e2e)")]


def versions():
    return list(device.versions().items())


def sizes():
    try:
        chosen = device.sizes()
    except (RuntimeError, ValueError):
        return []
    return [("problem sizes for this backend:", "")] + [(f"  {k}", v) for k, v in chosen.items()]


CHECKS = [backend, gpu, cuda_versions, compilers, tensor_cores, mpi, tools, versions, sizes]


def lines():
    """Every check's (label, text) lines; an unexpected error becomes that check's one line."""
    out = []
    for check in CHECKS:
        try:
            out.extend(check())
        except Exception as exc:  # noqa: BLE001 - doctor reports, it never fails with a traceback
            text = " ".join(f"{type(exc).__name__}: {exc}".split())
            out.append((check.__name__, f"check failed: {text}"))
    return out


def main():
    rows = lines()
    width = max(len(label) for label, _ in rows if not label.endswith(":"))
    for label, text in rows:
        print(f"{label:<{width}}  {text}".rstrip() if not label.endswith(":") else f"\n{label}")
    broken = any(label == "backend" and str(text).startswith("cannot start") for label, text in rows)
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
