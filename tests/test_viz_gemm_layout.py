"""The row-major picture and the dot-product stepper show what the index formulas say."""
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from gemmlab.viz import gemm_layout  # noqa: E402

rng = np.random.default_rng()


def test_row_major_index_and_address_follow_the_strides():
    rows, cols = (int(v) for v in rng.integers(2, 9, size=2))
    index, address = gemm_layout.row_major_table(rows, cols, itemsize=4, base=1000)
    flat = np.arange(rows * cols).reshape(rows, cols)       # NumPy's own row-major order
    np.testing.assert_array_equal(index, flat)
    strides = np.empty((rows, cols), dtype=np.float32).strides
    assert address[1, 0] - address[0, 0] == strides[0] and address[0, 1] - address[0, 0] == strides[1]
    fig = gemm_layout.draw_row_major(rows, cols, mark=(1, 1))
    assert len(fig.axes[0].patches) == rows * cols and fig.axes[0].get_xlabel()
    plt.close(fig)


def test_dot_product_steps_end_at_the_matrix_product():
    M, K, N = (int(v) for v in rng.integers(1, 7, size=3))
    A, B = rng.integers(-9, 10, (M, K)), rng.integers(-9, 10, (K, N))
    i, j = int(rng.integers(M)), int(rng.integers(N))
    steps = gemm_layout.dot_product_steps(A, B, i, j)
    assert [s["k"] for s in steps] == list(range(K))
    assert steps[-1]["acc"] == (A @ B)[i, j]
    with pytest.raises(ValueError, match="outside C"):
        gemm_layout.dot_product_steps(A, B, M, 0)
    with pytest.raises(ValueError, match="equal K"):
        gemm_layout.dot_product_steps(A, np.ones((K + 1, N)), 0, 0)


def test_the_stepper_follows_its_sliders():
    X = np.array([[1, 2, 3], [4, 5, 6]])
    W = np.array([[7, 8], [9, 10], [11, 12]])
    stepper = gemm_layout.DotProductStepper(X, W)
    assert stepper.state["acc"] == 0 and not stepper.state["finished"]
    stepper.i.value, stepper.j.value = 1, 1
    stepper.step.value = 2
    assert stepper.state["acc"] == 4 * 8 + 5 * 10 and stepper.state["k"] == 1
    stepper.step.value = 3
    assert stepper.state["finished"] and stepper.state["acc"] == (X @ W)[1, 1]
    assert f"<b>{(X @ W)[1, 1]}</b>" in stepper.text.value
    assert stepper.step.max == 3 and stepper.i.max == 1 and stepper.j.max == 1
