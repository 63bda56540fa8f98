"""The grader's sandbox for tests that grade as an instructor does: SANDBOX (bubblewrap, with no
copy of the package inside), and require_sandbox(), which skips the rest of a test where
bubblewrap is not installed (the GPU image has none), after the half that needs no sandbox ran."""
import pytest

from gemmlab_grader import sandbox
from gemmlab_grader.isolate import Isolation

SANDBOX = Isolation(package_root="/nonexistent-package-copy", sandbox=True)


def require_sandbox():
    if sandbox.bwrap() is None:
        pytest.skip("bubblewrap is not installed here: the graded run's half needs the sandbox")
