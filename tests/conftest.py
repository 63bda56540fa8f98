"""Test set-up: run on Numba's CUDA simulator unless GEMMLAB_BACKEND=gpu is set explicitly
(``make gpu-test``). Set before gemmlab or numba.cuda is imported anywhere in the session; notebook
kernels started by nbval inherit it through the environment.

The tests write nothing into the packages while they run: their bytecode is compiled here,
before any test, and Numba's on-disk cache goes to a folder outside the checkout. The grader
watches gemmlab and itself for changes while it grades
(tests/test_gemmlab_grader_grade_hostile.py), and a cache file that another test worker wrote at
that moment would read as a submission tampering with them."""
import compileall
import os
import shutil
import tempfile
from pathlib import Path

os.environ.setdefault("GEMMLAB_BACKEND", "sim")
os.environ.setdefault("MPLBACKEND", "Agg")
# On a machine with a CUDA driver, NVRTC 13 assembles through the driver's compute cache
# (~/.nv/ComputeCache): PTX it has assembled before comes back with no ptxas report, and the
# resource checks of tests/test_cudacompile.py found no kernels (the H200 suite, issue 39). The
# driver reads this when CUDA starts, so it is set here, before anything does.
os.environ.setdefault("CUDA_CACHE_DISABLE", "1")
os.environ.setdefault("NUMBA_CACHE_DIR", str(Path(tempfile.gettempdir())
                                             / f"gemmlab-test-numba-{os.getuid()}"))
# The labs' compile replies (gemmlab/labs/compile.py, kept_on_disk) go to a folder of this run,
# which its workers, their notebook kernels and graders share: a kernel compiles once per run, and
# a run reads nothing an earlier run or a student's lab kept.
if "GEMMLAB_COMPILE_CACHE" not in os.environ:
    os.environ["GEMMLAB_COMPILE_CACHE"] = _OWN_COMPILE_CACHE = tempfile.mkdtemp(
        prefix="gemmlab-test-compiles-")
for package in ("gemmlab", "gemmlab_grader"):
    compileall.compile_dir(Path(__file__).resolve().parent.parent / package, quiet=1)


# Files whose tests ``--dist loadfile`` deals out one by one rather than keeping on one worker:
# the longest of their runs, whose tests share no kernel, page or fixture. The NVRTC builds of
# the Hopper kernels (about 90 s each, four times that on a busy machine), the lessons run one
# after another and the lessons opened in JupyterLab were each the end of their run. (xdist's
# loadgroup would say this with marks, but with pytest 9 its group names never reach the scheduler.)
SPREAD = {"tests/test_cudacompile.py", "tests/test_docs_site_lesson_runs.py",
          "tests/e2e/test_lessons.py"}


# Work dealt out before the rest: the longest single tests and the file of one long test. xdist
# deals the largest scopes (most tests) first, so these came last and each run ended waiting for
# one of them (the FP8 NVRTC build took 186 s under CI's load, the macOS venv 131 s).
FIRST = ("tests/test_cudacompile.py::test_the_fp8_rung_builds",
         "tests/test_cudacompile.py::test_hopper_builds", "tests/test_constraints.py",
         "tests/e2e/test_student_loop.py")


def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class LoadFileSpreadingSome(LoadFileScheduling):
        def _split_scope(self, nodeid):
            scope = super()._split_scope(nodeid)
            return nodeid if scope in SPREAD else scope

        def _assign_work_unit(self, node):
            for scope in [s for s in self.workqueue if s.startswith(FIRST)]:
                self.workqueue.move_to_end(scope, last=False)
            super()._assign_work_unit(node)

    return LoadFileSpreadingSome(config, log)


def pytest_unconfigure(config):
    """The run's compile cache goes with the process that made it (with xdist, the controller)."""
    if "_OWN_COMPILE_CACHE" in globals():
        shutil.rmtree(_OWN_COMPILE_CACHE, ignore_errors=True)
