"""How long a GEMM takes on Numba's CUDA simulator, to warn before a run of minutes or hours.

The simulator runs one OS thread per CUDA thread in Python, so its time grows with the number
of multiply-adds, M*N*K, at microseconds to tens of microseconds each (barriers and shared memory
cost more). :data:`SECONDS_PER_FMA` is the median CPU time per multiply-add measured by
``benchmarks/sim_cost.py`` at 24^3..48^3 (recorded in ``benchmarks/sim_cost.json`` with the
machine and its load): the time on a machine with a core to spare. On a busy machine the
wall-clock time is longer: on the 2-core machine that measured it, at load averages of 10-17,
1.7-6x longer, while two runs' CPU times agreed within 10% for every rung but ``naive`` (30%). So
an estimate is good to a factor of two where the simulator has a core to itself, not better.
"""
import warnings

from . import device

SECONDS_PER_FMA = {"naive": 7e-6, "tiled": 57e-6, "pingpong": 67e-6, "outer": 19e-6,
                   "twolevel": 20e-6, "unrolled": 21e-6}


class SimulatorSlowWarning(UserWarning):
    """A GEMM larger than the simulator's lesson sizes: it will take long."""


def largest_lesson_gemm():
    """M*N*K of the largest GEMM this backend's sizes (``gl.device.sizes()``) ask for."""
    sizes = device.sizes()
    volumes = [sizes["gemm_n"] ** 3] + [n ** 3 for n in sizes["bench_sizes"]]
    volumes += [M * N * K for M, N, K in sizes["gemm_shapes"]]
    return max(volumes)


def expected_seconds(kernel, M, N, K):
    return SECONDS_PER_FMA.get(kernel, max(SECONDS_PER_FMA.values())) * M * N * K


def _duration(seconds):
    for unit, scale in (("hours", 3600), ("minutes", 60)):
        if seconds >= 2 * scale:
            return f"{seconds / scale:.0f} {unit}"
    return f"{seconds:.0f} s" if seconds >= 2 else f"{seconds:.1f} s"


def warn_if_slow(kernel, M, N, K):
    """On the simulator, warn (SimulatorSlowWarning) when an M x N x K GEMM is larger than the
    backend's lesson sizes, with the time it should take."""
    if device.backend() != "sim" or M * N * K <= largest_lesson_gemm():
        return
    warnings.warn(
        f"gl.gemm on the simulator: {M} x {N} x {K} is larger than this backend's sizes "
        f"(gl.device.sizes()); the simulator runs one thread per CUDA thread in Python, so "
        f"'{kernel}' should take about {_duration(expected_seconds(kernel, M, N, K))} "
        f"(within a factor of 2). Use gl.device.sizes(), or a GPU.",
        SimulatorSlowWarning, stacklevel=3)
