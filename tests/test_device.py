"""Backend choice: env override, errors, sizes, and info() fields."""
import os
import subprocess
import sys

import pytest

import gemmlab
from gemmlab import cudadriver, device


def _run(code, backend):
    env = dict(os.environ, GEMMLAB_BACKEND=backend)
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=120)


def test_backend_is_the_forced_one_in_this_session():
    assert device.backend() == os.environ["GEMMLAB_BACKEND"]


def test_sim_sets_the_numba_simulator_before_numba_cuda_is_imported():
    out = _run("import gemmlab; cuda = gemmlab.device.cuda(); "
               "print(gemmlab.device.backend(), cuda.simulator.__name__ if hasattr(cuda, 'simulator') else '', "
               "__import__('os').environ['NUMBA_ENABLE_CUDASIM'])", "sim")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[0] == "sim" and out.stdout.split()[-1] == "1"


def test_unknown_backend_name_is_a_clear_error():
    out = _run("import gemmlab, sys\nprint('imported', file=sys.stderr)\ngemmlab.device.cuda()",
               "tpu")
    assert out.returncode != 0 and "expected one of gpu, sim" in out.stderr
    assert "imported" in out.stderr      # the import goes on (doctor must run); the first use fails


@pytest.mark.skipif(cudadriver.device_count() > 0, reason="a GPU is present")
def test_forcing_gpu_without_one_says_how_to_fix_it():
    out = _run("import gemmlab; gemmlab.device.cuda()", "gpu")
    assert out.returncode != 0 and "no NVIDIA GPU" in out.stderr and "sim" in out.stderr


def test_sizes_is_a_copy_with_the_same_keys_on_both_backends():
    s = device.sizes()
    s["accumulate_n"] = -1
    assert device.sizes()["accumulate_n"] != -1
    assert set(device.SIZES["sim"]) == set(device.SIZES["gpu"])


def test_info_reports_the_versions_doctor_prints():
    info = device.info()
    for key in ("backend", "gpu", "compute_capability", "numba", "numba-cuda", "numpy",
                "ml_dtypes", "cupy"):
        assert key in info
    assert info["numpy"] != "not installed"
    if info["backend"] == "gpu":
        assert info["gpu"] and info["compute_capability"]


def test_unknown_attribute_of_the_package_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute"):
        gemmlab.not_a_module


def test_numba_imported_before_gemmlab_still_gets_the_simulator():
    out = _run("import numba; import gemmlab; cuda = gemmlab.device.cuda(); "
               "print(cuda.jit.__module__)", "sim")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().startswith("numba.cuda.simulator")


def test_numba_cuda_imported_before_gemmlab_in_the_other_mode_is_refused():
    out = _run("from numba import cuda; import gemmlab; gemmlab.device.backend()", "sim")
    assert out.returncode != 0 and "import gemmlab first" in out.stderr


def test_numba_cuda_imported_after_gemmlab_is_the_chosen_backend():
    """As every Numba tutorial writes it: `import gemmlab as gl`, then `from numba import cuda`
    (no gemmlab call in between) gets the simulator here, not 'CUDA driver library not found'."""
    out = _run("import gemmlab as gl\nfrom numba import cuda\nimport numpy as np\n"
               "@cuda.jit\ndef double(x):\n    i = cuda.grid(1)\n    if i < x.size:\n"
               "        x[i] *= 2\nx = np.arange(5.0)\ndouble[1, 8](x)\n"
               "print(gl.device.backend(), cuda.jit.__module__, x.tolist())", "sim")
    assert out.returncode == 0, out.stderr
    backend, module, values = out.stdout.split(" ", 2)
    assert backend == "sim" and module.startswith("numba.cuda.simulator")
    assert values.strip() == "[0.0, 2.0, 4.0, 6.0, 8.0]"
