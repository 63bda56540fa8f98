# The course's commands. `make lab` and `make test` create .venv on first use and refresh it
# whenever pyproject.toml changes; otherwise they reuse it as it is.
PYTHON ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
PORT ?= 8888
# The installer. pip by default; .ci/run names uv's pip interface, which installs the same pinned
# versions (constraints.txt) several times faster on CI's two busy cores.
PIP ?= $(VPY) -m pip
# `make test JOBS=1` uses one worker; the default is two per core, at most 16 (pytest-xdist): much
# of the suite waits (notebook kernels, compiler children, sandboxes, timeouts), and on 2 cores
# four workers ran it in 707 s where two took 1,123. Eight were no faster (the run then keeps both
# cores busy: benchmarks/RESULTS.md). `--dist loadfile`
# keeps the cells of one notebook in one worker, since they share one kernel.
JOBS ?= $(shell $(PYTHON) -c "import os; print(min(16, 2 * (os.cpu_count() or 1)))")
# For `make gpu-test`: the venv when there is one, else the interpreter at hand (offline GPU boxes).
GPU_PYTHON ?= $(if $(wildcard $(VPY)),$(VPY),$(PYTHON))

# The base install is what a student needs to run the lessons; each target adds the optional
# dependencies (pyproject.toml) it needs to .venv once: JupyterLab (`lab`), the test and lint tools
# (`dev`: `make test`, `make check`, `make lint`), the site builder and the browser tests.
LAB_STAMP := $(VENV)/.lab-stamp
DEV_STAMP := $(VENV)/.dev-stamp
SITE_STAMP := $(VENV)/.site-stamp
E2E_STAMP := $(VENV)/.e2e-stamp

.PHONY: venv lab test check lint gpu-test assign site e2e

venv: $(STAMP)

# setuptools announces each editable install with a banner ("Editable installation ... Please be
# careful with folders ..."), a note for package authors: PYTHONWARNINGS keeps it out of `make lab`.
$(STAMP): pyproject.toml
	@test -x $(VPY) || $(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip
	PYTHONWARNINGS="ignore:Editable installation" $(PIP) install -q -e .
	@touch $(STAMP)

$(LAB_STAMP): $(STAMP)
	PYTHONWARNINGS="ignore:Editable installation" $(PIP) install -q -e '.[lab]'
	@touch $@

# The developers' tools; on top of the [lab] extra, since the tests start JupyterLab as `make lab`
# and `gemmlab lab` do.
$(DEV_STAMP): $(LAB_STAMP)
	PYTHONWARNINGS="ignore:Editable installation" $(PIP) install -q -e '.[dev]'
	@touch $@

# `gemmlab lab` (gemmlab/grading/start_lab.py) makes your student folder, $(WORK)/, or adds what it
# lacks: your own copies of the lessons ($(WORK)/notebooks/), the exercises ($(WORK)/exercises/)
# and the glossary, laid out as in the repository so that every link works there. Your files are
# never overwritten, git ignores work/, and the repository's notebooks/ stay as they are. Then it
# becomes JupyterLab with $(WORK)/ as its root, the course's settings (jupyter/: no news pop-up; a
# kernel that says which cell to run after a restart), the token in its environment (never on a
# command line that `ps` shows) and kernels on private Unix sockets (no TCP ports).
WORK ?= work
lab: $(LAB_STAMP)
	@exec $(VENV)/bin/gemmlab lab $(WORK) --port=$(PORT)

# --durations: CI's log names the slowest tests, where a slow run's minutes went.
test: $(DEV_STAMP)
	GEMMLAB_BACKEND=sim $(VPY) -m pytest -n $(JOBS) --dist loadfile --durations=15

# The edit-run loop: the lint gate, the unit tests and two lessons as a smoke test of the notebooks
# (README, "The two commands"). Left to `make test`: the slow tests, and the files that run whole
# courses, notebooks, worker processes per case or NVRTC for every GPU architecture.
CHECK_NOTEBOOKS := notebooks/00_start_here.ipynb notebooks/07_ring_allreduce.ipynb
CHECK_LEAVES := tests/e2e tests/test_docs_site_lesson_runs.py \
  tests/test_gemmlab_grader_grade_course.py tests/test_gemmlab_grader_isolate.py \
  tests/test_cudacompile.py tests/test_labs_kernel_lab.py tests/test_notebook_run.py \
  tests/test_docs_site_build.py tests/test_collectives_jobs_without_mpi.py tests/test_grading_handout.py \
  tests/test_labs_compile.py tests/test_grading_bank.py tests/test_labs_puzzles.py \
  tests/test_grading_checker.py tests/test_labs_mpi.py tests/test_collectives_jobs.py \
  tests/test_grading_checker_plain.py

check: lint
	GEMMLAB_BACKEND=sim $(VPY) -m pytest -n $(JOBS) --dist loadfile -m "not slow" -q \
	  $(addprefix --ignore=,$(CHECK_LEAVES)) tests $(CHECK_NOTEBOOKS)

# The lint gate (.ci/run): zero findings of pyproject.toml's [tool.ruff] rules, in a second or two.
lint: $(DEV_STAMP)
	$(VENV)/bin/ruff check .

gpu-test:
	GEMMLAB_BACKEND=gpu $(GPU_PYTHON) -m pytest -n 0 tests notebooks solutions exercises

# For instructors: regenerate exercises/ from solutions/. It never overwrites an exercise notebook
# changed since it wrote it (--force in `gemmlab assign` does); students work in their student folder, work/.
assign: $(STAMP)
	@echo "make assign is for instructors: it regenerates exercises/ from solutions/ (students: your notebooks are in work/exercises/)"
	$(VENV)/bin/gemmlab assign

$(SITE_STAMP): $(STAMP)
	$(PIP) install -q -e '.[site]'
	@touch $@

$(E2E_STAMP): $(SITE_STAMP) $(LAB_STAMP) $(DEV_STAMP)
	$(PIP) install -q -e '.[e2e]'
	@touch $@

# The course as static HTML in site/: lessons executed on the simulator, exercises as they are.
site: $(SITE_STAMP)
	$(VPY) docs/site/build.py --out site

# Browser tests (JupyterLab started by `make lab`, Debian's /usr/bin/chromium headless) and the
# site build test. Needs `apt-get install chromium`; artifacts in tests/e2e/artifacts/gw*/. Three
# workers, each with its own JupyterLab and Chromium. Every file stays on one worker (its tests
# share one page or one build) except the lessons', dealt out one by one (tests/conftest.py's SPREAD).
e2e: $(E2E_STAMP)
	GEMMLAB_BACKEND=sim $(VPY) -m pytest tests/e2e -n 3 --dist loadfile --durations=10
