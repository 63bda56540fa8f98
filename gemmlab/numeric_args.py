"""Checks of numeric arguments, shared by the models, the collectives and the parallel layers: a
wrong argument gets a message naming it and what it was."""
import numbers


def whole_number(name, value, least=1):
    """``value`` as an int, if it is a whole number >= ``least``: a Python or NumPy integer, not a
    bool (a count of ranks, repeats or bytes; np.int64 from an array is as good as an int)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < least:
        raise ValueError(f"{name} must be a whole number >= {least}, got {value!r}")
    return int(value)


def non_negative(name, value):
    """``value`` as a float, if it is a real number >= 0."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not value >= 0:
        raise ValueError(f"{name} must be a number >= 0, got {value!r}")
    return float(value)


def positive(name, value):
    """``value`` as a float, if it is a real number > 0."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not value > 0:
        raise ValueError(f"{name} must be > 0, got {value!r}")
    return float(value)


def fraction(name, value):
    """``value`` as a float, if it lies in [0, 1]."""
    if non_negative(name, value) > 1:
        raise ValueError(f"{name} is a fraction of the time and must lie in [0, 1], got {value!r}")
    return float(value)
