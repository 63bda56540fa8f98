# The course's commands. `make lab` and `make test` create .venv on first use and refresh it
# whenever pyproject.toml changes; otherwise they reuse it as it is.
PYTHON ?= python3
VENV := .venv
VPY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
PORT ?= 8888
# `make test JOBS=1` uses one worker; the default uses every core (pytest-xdist). `--dist loadfile`
# keeps the cells of one notebook in one worker, since they share one kernel.
JOBS ?= auto
# For `make gpu-test`: the venv when there is one, else the interpreter at hand (offline GPU boxes).
GPU_PYTHON ?= $(if $(wildcard $(VPY)),$(VPY),$(PYTHON))

# `make site` and `make e2e` add their optional dependencies (pyproject.toml) to .venv once.
SITE_STAMP := $(VENV)/.site-stamp
E2E_STAMP := $(VENV)/.e2e-stamp

.PHONY: venv lab test gpu-test assign site e2e

venv: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(VPY) || $(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q -e .
	@touch $(STAMP)

lab: $(STAMP)
	@token=$$($(VPY) -c 'import secrets; print(secrets.token_hex(16))'); \
	browser=$$(if [ -n "$$DISPLAY$$WAYLAND_DISPLAY" ] || [ "$$(uname)" = Darwin ]; then echo; else echo --no-browser; fi); \
	echo; echo "  Open: http://localhost:$(PORT)/lab/tree/notebooks/00_start_here.ipynb?token=$$token"; echo; \
	$(VENV)/bin/jupyter lab notebooks/00_start_here.ipynb --ServerApp.root_dir=. \
	  --port=$(PORT) --ServerApp.port_retries=0 --IdentityProvider.token=$$token $$browser \
	  $$( [ "$$(id -u)" = 0 ] && echo --allow-root )

test: $(STAMP)
	GEMMLAB_BACKEND=sim $(VPY) -m pytest -n $(JOBS) --dist loadfile

gpu-test:
	GEMMLAB_BACKEND=gpu $(GPU_PYTHON) -m pytest -n 0

assign: $(STAMP)
	$(VENV)/bin/gemmlab assign

$(SITE_STAMP): $(STAMP)
	$(VPY) -m pip install -q -e '.[site]'
	@touch $@

$(E2E_STAMP): $(SITE_STAMP)
	$(VPY) -m pip install -q -e '.[e2e]'
	@touch $@

# The course as static HTML in site/: lessons executed on the simulator, exercises as they are.
site: $(SITE_STAMP)
	$(VPY) docs/site/build.py --out site

# Browser tests (JupyterLab started by `make lab`, Debian's /usr/bin/chromium headless) and the
# site build test. Needs `apt-get install chromium`; artifacts in tests/e2e/artifacts/.
e2e: $(E2E_STAMP)
	GEMMLAB_BACKEND=sim $(VPY) -m pytest tests/e2e -n 0 --durations=10
