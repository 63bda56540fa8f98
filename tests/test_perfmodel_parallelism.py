"""Amdahl's law at its edge: with nothing left unaccelerated and no overhead, the speedup is
infinite, not a ZeroDivisionError."""
import math

import pytest

from gemmlab import perfmodel as pm


def test_amdahl_with_nothing_left_is_infinite_not_an_error():
    assert pm.amdahl(0, math.inf) == math.inf
    assert pm.amdahl(0, 8) == 8
    assert pm.amdahl(0, math.inf, overhead=0.1) == pytest.approx(10)
