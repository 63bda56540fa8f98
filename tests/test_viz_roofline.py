"""The roofline drawing and the kernel picker agree with the roofline model."""
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import gemmlab as gl  # noqa: E402
from gemmlab.viz import roofline  # noqa: E402

pm = gl.perfmodel
rng = np.random.default_rng()


def test_kernels_sit_on_the_roof_and_measured_points_where_measured():
    P, B = float(rng.uniform(1e13, 1e14)), float(rng.uniform(1e12, 5e12))
    kernels = {"low": float(rng.uniform(0.01, 1)), "high": float(rng.uniform(100, 1000))}
    fig = roofline.draw_roofline(P, B, kernels, measured={"run": (50.0, 0.3 * P)})
    ax = fig.axes[0]
    points = {line.get_label().split(":")[0]: (line.get_xdata()[0], line.get_ydata()[0])
              for line in ax.lines if len(line.get_xdata()) == 1}
    for name, i in kernels.items():
        assert points[name][1] == pytest.approx(pm.attainable_flops(i, P, B) / 1e12)
    assert points["run (measured)"] == pytest.approx((50.0, 0.3 * P / 1e12))
    assert "FLOP/B" in ax.get_xlabel() and "TFLOP/s" in ax.get_ylabel()
    plt.close(fig)
    with pytest.raises(ValueError, match="> 0"):
        roofline.draw_roofline(P, B, {"bad": 0.0})


def test_the_picker_switches_kernel_and_bound():
    h200 = pm.chip("H200")
    n = int(rng.integers(10**6, 10**8))
    F = pm.gemm_flops(1024, 1024, 1024)
    kernels = {"vector add": pm.vector_add_counts(n),
               "GEMM ideal": (F, pm.gemm_traffic(1024, 1024, 1024, "ideal"))}
    w = roofline.RooflineExplorer(h200.peak(), h200.bandwidth.value, kernels)
    assert w.state["bound"] == "bandwidth"
    assert w.state["time"] == pytest.approx(3 * 4 * n / h200.bandwidth.value)
    w.picker.value = "GEMM ideal"
    assert w.state["bound"] == "compute" and w.state["attainable"] == pytest.approx(h200.peak())
    assert "compute-bound" in w.text.value
