"""gl.cudadriver: the driver library found or reported missing, and a failed call raised with the
driver's own name for the error."""
import pytest

from gemmlab import cudadriver


class FakeDriver:
    """Stands in for libcuda: names error 999 as the driver would."""

    @staticmethod
    def cuGetErrorName(result, name):
        name._obj.value = b"CUDA_ERROR_UNKNOWN" if result == 999 else None
        return 0


def test_a_failed_call_says_what_failed_and_the_drivers_name_for_it():
    cudadriver.check(0, "cuInit", FakeDriver())                  # success: nothing raised
    with pytest.raises(RuntimeError, match=r"^cuMemGetAddressRange\(0x10\) failed: "
                                           r"CUDA_ERROR_UNKNOWN$"):
        cudadriver.check(999, "cuMemGetAddressRange(0x10)", FakeDriver())
    with pytest.raises(RuntimeError, match="cuInit failed: 3$"):      # a code without a name
        cudadriver.check(3, "cuInit", FakeDriver())


def test_without_a_driver_library(monkeypatch):
    monkeypatch.setitem(cudadriver.NAMES, "linux", ("libcuda-that-is-not-here.so",))
    monkeypatch.setitem(cudadriver.NAMES, "win32", ("nvcuda-that-is-not-here.dll",))
    cudadriver.library.cache_clear()
    try:
        assert cudadriver.library() is None
        with pytest.raises(RuntimeError, match="no CUDA driver library found"):
            cudadriver.required()
    finally:
        cudadriver.library.cache_clear()


def test_the_library_is_loaded_once(monkeypatch):
    loads = []
    monkeypatch.setattr(cudadriver.ctypes, "CDLL", lambda name: loads.append(name) or name)
    cudadriver.library.cache_clear()
    try:
        assert cudadriver.library() is cudadriver.library() is not None
        assert len(loads) == 1
    finally:
        cudadriver.library.cache_clear()


def test_driver_version_reads_the_library_or_says_none(monkeypatch):
    class Fake:
        def cuDriverGetVersion(self, out):
            out._obj.value = 12040
            return 0
    monkeypatch.setattr(cudadriver, "library", lambda: None)
    assert cudadriver.driver_version() is None
    monkeypatch.setattr(cudadriver, "library", lambda: Fake())
    assert cudadriver.driver_version() == 12040
