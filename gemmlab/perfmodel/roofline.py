"""The roofline: two lower bounds on time (compute and data movement) and what they imply.

A kernel doing ``flops`` operations and moving ``nbytes`` across one memory boundary cannot take
less than ``flops / peak`` nor less than ``nbytes / bandwidth``; even with perfect overlap it takes
at least the larger. Dividing by the time turns that into the roofline: attainable FLOP/s is at most
``min(peak, bandwidth * intensity)`` with intensity ``flops / nbytes``.
"""
import numpy as np

from ..numeric_args import non_negative, positive


def intensity(flops, nbytes):
    """Arithmetic intensity in FLOP per byte moved across the boundary the bytes were counted at."""
    return non_negative("flops", flops) / positive("nbytes", nbytes)


def ridge_point(peak_flops, bandwidth):
    """The intensity (FLOP/B) where the bandwidth roof ``B * I`` reaches the compute roof ``P``."""
    return positive("peak_flops", peak_flops) / positive("bandwidth", bandwidth)


def roofline_time(flops, bytes, peak_flops, bandwidth):
    """Lower bound on time in seconds: ``max(flops / peak_flops, bytes / bandwidth)``."""
    compute = non_negative("flops", flops) / positive("peak_flops", peak_flops)
    memory = non_negative("bytes", bytes) / positive("bandwidth", bandwidth)
    return max(compute, memory)


def limiting_resource(flops, bytes, peak_flops, bandwidth):
    """"compute" or "bandwidth": which of the two bounds of :func:`roofline_time` is larger."""
    compute = non_negative("flops", flops) / positive("peak_flops", peak_flops)
    memory = non_negative("bytes", bytes) / positive("bandwidth", bandwidth)
    return "compute" if compute >= memory else "bandwidth"


def attainable_flops(intensity, peak_flops, bandwidth):
    """Roofline ceiling in FLOP/s: ``min(peak, bandwidth * intensity)``; works on arrays too."""
    positive("peak_flops", peak_flops)
    positive("bandwidth", bandwidth)
    values = np.asarray(intensity, dtype=np.float64)
    if np.any(values < 0) or np.any(np.isnan(values)):
        raise ValueError(f"intensity must be >= 0 FLOP/B, got {intensity!r}")
    result = np.minimum(peak_flops, bandwidth * values)
    return float(result) if result.ndim == 0 else result


def effective_bandwidth(nbytes, seconds):
    """Bytes per second a run achieved if it moved ``nbytes`` in ``seconds``."""
    return non_negative("nbytes", nbytes) / positive("seconds", seconds)
