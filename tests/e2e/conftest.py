"""Fixtures of the browser suite: one JupyterLab and one headless Chromium per session (per
worker when run in parallel; ``make e2e`` keeps each file on one worker but the lessons', whose
lessons it deals out one by one: tests/conftest.py's SPREAD).

The suite needs a browser, so ``make test`` (plain ``pytest``) leaves it out: it is collected only
when this folder is named on the command line, as ``make e2e`` does (``pytest tests/e2e``).
Screenshots and the JupyterLab log go to ``tests/e2e/artifacts/`` (git-ignored; ``gw0/``, ``gw1/``
... for the workers of a parallel run).
"""
import contextlib
import os
import shutil
from pathlib import Path

import pytest

from .lab import running_lab

HERE = Path(__file__).resolve().parent
ARTIFACTS = HERE / "artifacts"

# Debian's Chromium, never a downloaded one. The flags keep it quiet on a closed network: no
# background, update or sync connections that would be refused.
CHROMIUM = os.environ.get("GEMMLAB_E2E_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_FLAGS = ["--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync"]


def _named_on_command_line(config):
    for arg in config.args:
        path = (config.invocation_params.dir / arg.split("::")[0]).resolve()
        if path == HERE or HERE in path.parents:
            return True
    return False


def pytest_ignore_collect(collection_path, config):
    if collection_path == ARTIFACTS or ARTIFACTS in collection_path.parents:
        return True                 # generated notebooks live there: never collect them
    if not _named_on_command_line(config):
        return True
    return None


@pytest.fixture(scope="session")
def artifacts():
    """This run's folder: ``artifacts/``, or ``artifacts/gw0/`` ... for each worker of a parallel
    run (``make e2e`` runs three, each with its own JupyterLab and Chromium)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    folder = ARTIFACTS / worker if worker else ARTIFACTS
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


@pytest.fixture(scope="session")
def lab(artifacts):
    """A JupyterLab started by ``make lab``; stopped at the end of the session, pass or fail."""
    with running_lab(artifacts / "lab") as running:
        yield running


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright     # only here: `make test` has no browser
    if not Path(CHROMIUM).exists():
        pytest.fail(f"no Chromium at {CHROMIUM}: `apt-get install chromium` (Debian), or set "
                    f"GEMMLAB_E2E_CHROMIUM to a Chromium or Chrome binary")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="session")
def open_page(browser, lab, artifacts):
    """``with open_page(name) as page``: a fresh page. On the way out, pass or fail, its last
    view is saved as ``pages/<name>.png`` and the kernels it started are shut down."""
    @contextlib.contextmanager
    def opener(name):
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        context.set_default_timeout(30_000)
        page = context.new_page()
        try:
            yield page
        finally:
            (artifacts / "pages").mkdir(exist_ok=True)
            page.screenshot(path=artifacts / "pages" / f"{name}.png")
            context.close()
            lab.shutdown_kernels()
    return opener


@pytest.fixture
def page(open_page, request):
    with open_page(request.node.name) as new_page:
        yield new_page
