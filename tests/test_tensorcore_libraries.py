"""The libraries every speed figure is a ratio to: each one found, or left out with its reason
(never an error that would take the other baselines with it), and the fastest one the baseline."""
import pytest

from gemmlab.tensorcore import libraries


def test_a_missing_or_failing_library_is_left_out_with_its_reason(monkeypatch):
    ran = []

    def works(A, B, out):
        return lambda: ran.append((A, B, out))

    def absent(A, B, out):
        raise ImportError("No module named 'nvmath'", name="nvmath")

    def refuses(A, B, out):
        raise RuntimeError("no kernel for this shape")

    monkeypatch.setattr(libraries, "LIBRARIES", {"works": works, "absent": absent,
                                                 "refuses": refuses})
    found, missing = libraries.launchers("A", "B", "C")
    assert list(found) == ["works"]
    assert ran == [("A", "B", "C")]               # run once: autotuning is behind the timings
    assert missing == {"absent": "not installed (nvmath)",
                       "refuses": "RuntimeError: no kernel for this shape"}
    found, missing = libraries.launchers("A", "B", "C", names=["absent"])
    assert found == {} and list(missing) == ["absent"]


def test_without_nvmath_the_cublaslt_baseline_says_it_is_not_installed(monkeypatch):
    import builtins
    real_import = builtins.__import__

    def no_nvmath(name, *args, **kwargs):
        if name.startswith("nvmath"):
            raise ImportError(f"No module named {name!r}", name=name)
        return real_import(name, *args, **kwargs)
    monkeypatch.setattr(builtins, "__import__", no_nvmath)
    found, missing = libraries.launchers(None, None, None, names=[libraries.NVMATH])
    assert found == {} and missing[libraries.NVMATH].startswith("not installed (nvmath")


def test_the_baseline_is_the_fastest_library():
    assert libraries.best({"cupy.matmul": 0.30, "torch.matmul": 0.25, "triton": 0.41}) == \
        ("torch.matmul", 0.25)
    with pytest.raises(ValueError, match="no library was timed"):
        libraries.best({})
