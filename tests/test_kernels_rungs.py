"""gl.kernels.get and gl.gemm name a rung by a string; anything else is a clear TypeError."""
import numpy as np
import pytest

import gemmlab as gl


@pytest.mark.parametrize("kernel", [["tiled"], ("tiled",), 3, None])
def test_a_kernel_that_is_not_a_name_is_a_type_error(kernel):
    A = np.ones((4, 4), np.float32)
    with pytest.raises(TypeError, match=r"kernel must be the name of a rung, e.g. 'tiled', got"):
        gl.gemm(A, A, kernel=kernel)


def test_an_unknown_name_is_a_value_error_with_a_suggestion():
    with pytest.raises(ValueError, match="Did you mean 'tiled'"):
        gl.kernels.get("tiles")
