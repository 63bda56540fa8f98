"""gl.gemm on the simulator warns, with the expected time, above the backend's lesson sizes."""
import warnings

import numpy as np
import pytest

import gemmlab as gl
from gemmlab import simcost

pytestmark = pytest.mark.skipif(gl.device.backend() != "sim", reason="simulator only")


def test_a_gemm_above_the_lesson_sizes_warns_with_the_expected_time():
    n = round(simcost.largest_lesson_gemm() ** (1 / 3)) + 8
    A = np.ones((n, n), np.float32)
    with pytest.warns(simcost.SimulatorSlowWarning) as caught:
        gl.gemm(A, A, kernel="naive")
    text = str(caught[0].message)
    expected = simcost.expected_seconds("naive", n, n, n)
    assert f"{n} x {n} x {n} is larger than this backend's sizes" in text
    assert f"'naive' should take about {expected:.1f} s" in text


def test_lesson_sizes_do_not_warn():
    n = gl.device.sizes()["gemm_n"]
    A = np.ones((n, n), np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error", simcost.SimulatorSlowWarning)
        gl.gemm(A, A)


def test_the_message_of_a_long_run_speaks_in_minutes_and_hours(recwarn):
    simcost.warn_if_slow("tiled", 512, 512, 512)
    text = str(recwarn.pop(simcost.SimulatorSlowWarning).message)
    hours = simcost.SECONDS_PER_FMA["tiled"] * 512 ** 3 / 3600
    assert f"about {hours:.0f} hours" in text
    seconds = simcost.SECONDS_PER_FMA["outer"] * 64 ** 3
    assert 2 <= seconds < 120                       # a shape whose estimate is in seconds
    simcost.warn_if_slow("outer", 64, 64, 64)
    assert f"about {seconds:.0f} s" in str(recwarn.pop(simcost.SimulatorSlowWarning).message)


def test_every_rung_has_its_own_measured_cost():
    """A rung without a figure would be estimated with the slowest rung's cost."""
    assert set(simcost.SECONDS_PER_FMA) == set(gl.kernels.names())
