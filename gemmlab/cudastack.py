"""Which CUDA stack fits this machine: the driver's CUDA version against the CuPy wheel installed
(``cupy-cuda12x`` or ``cupy-cuda13x``), and the gemmlab extra to install (``cuda12``/``cuda13``).

Standard library only (and ``cudadriver``): the Colab set-up calls it before anything else of the
course is installed, and ``gemmlab doctor`` calls it where CuPy may be missing or broken.
A wheel built for CUDA major version X needs a driver that supports X or newer: a 13.x driver runs
both stacks, a 12.x driver only ``cuda12``.
"""
import importlib.metadata

from . import cudadriver

CUPY_WHEELS = {"cupy-cuda12x": 12, "cupy-cuda13x": 13}
EXTRAS = {12: "cuda12", 13: "cuda13"}


def driver():
    """The newest CUDA version the driver supports, as (major, minor), e.g. (12, 4); None without a
    driver (``cudadriver.driver_version`` gives it as 12040)."""
    version = cudadriver.driver_version()
    return (version // 1000, version % 1000 // 10) if version else None


def extra_for(driver):
    """The extra ("cuda12" or "cuda13") for a driver supporting CUDA ``driver`` = (major, minor),
    the newest it can run; None for a driver older than CUDA 12 (no stack of the course runs)."""
    if driver is None or driver[0] < min(EXTRAS):
        return None
    return EXTRAS[min(driver[0], max(EXTRAS))]


def installed_cupy():
    """{distribution: version} of the CuPy wheels installed (two at once conflict)."""
    found = {}
    for dist in (*CUPY_WHEELS, "cupy"):
        try:
            found[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return found


def check(driver, cupy=None):
    """(ok, one line) comparing the driver's CUDA version with the CuPy wheel(s) installed."""
    cupy = installed_cupy() if cupy is None else cupy
    wanted = extra_for(driver)
    fix = f"pip install 'gemmlab[{wanted}]'" if wanted else "update the NVIDIA driver"
    if driver is None:
        return True, "no NVIDIA driver: CuPy is not needed on the simulator"
    if wanted is None:
        return False, (f"the driver supports CUDA {driver[0]}.{driver[1]}; the course needs CUDA 12 "
                       f"or newer: update the NVIDIA driver")
    if not cupy:
        return False, f"CuPy is not installed (no cuBLAS baseline, no Tensor Core kernels): {fix}"
    if len(cupy) > 1:
        return False, (f"several CuPy wheels are installed ({', '.join(sorted(cupy))}) and conflict: "
                       f"pip uninstall them all, then {fix}")
    (dist, version), = cupy.items()
    needs = CUPY_WHEELS.get(dist)
    if needs is None:
        return True, f"{dist} {version} (built from source, for the CUDA it was built with)"
    if needs > driver[0]:
        return False, (f"{dist} {version} needs a CUDA {needs} driver; this driver supports CUDA "
                       f"{driver[0]}.{driver[1]}: pip uninstall {dist}, then {fix}")
    return True, f"{dist} {version} runs on this driver (CUDA {driver[0]}.{driver[1]})"
