"""The dependencies of a student's install (pyproject.toml's base list and its `lab` extra) as they
resolve on each platform the course supports, written to constraints/<platform>.txt.

pip's ``--platform`` does not evaluate environment markers for the target, so the sets come from
``uv pip compile --python-platform``, which does; ``--exclude-newer`` fixes the date the index is
read at, so that a later run gives the same set unless pyproject.toml changed (CI checks that:
tests/test_constraints.py). Run it after changing the dependencies::

    python constraints/resolve.py            # rewrite the three sets
    python constraints/resolve.py --check    # exit 1, naming the differences, if they are stale

It needs uv (pyproject's `dev` extra) and the package index.
"""
import argparse
import difflib
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HERE = ROOT / "constraints"
PYTHON = "3.12"
INDEX_DATE = "2026-12-06T00:00:00Z"     # the index as it was then (uv's --exclude-newer)
EXTRAS = ("lab",)
PLATFORMS = {               # file stem -> uv's --python-platform
    "macos-arm64": "aarch64-apple-darwin",
    "windows-x86_64": "x86_64-pc-windows-msvc",
    "linux-x86_64": "x86_64-manylinux_2_28",
}


def uv():
    """The uv command: the one installed beside this Python (the `dev` extra), else on PATH."""
    if importlib.util.find_spec("uv") is not None:
        return [sys.executable, "-m", "uv"]
    found = shutil.which("uv")
    if not found:
        raise FileNotFoundError("uv is not installed: pip install uv (pyproject's `dev` extra)")
    return [found]


# uv reads these from the environment, and CI exports UV_CONSTRAINT (this machine's pins) for its
# own installs: a platform's set must come from pyproject.toml alone, whoever runs this.
CALLERS_PINS = ("UV_CONSTRAINT", "UV_OVERRIDE", "UV_BUILD_CONSTRAINT")


def uv_environment():
    """The environment for uv: this one without the caller's constraints and overrides."""
    return {k: v for k, v in os.environ.items() if k not in CALLERS_PINS}


def command(platform, python=PYTHON):
    """The uv command line that resolves the set for ``platform`` (a key of :data:`PLATFORMS`) and
    Python ``python`` ("3.12")."""
    return ["uv", "pip", "compile", "pyproject.toml", *(f"--extra={e}" for e in EXTRAS),
            f"--python-platform={PLATFORMS[platform]}", f"--python-version={python}",
            f"--exclude-newer={INDEX_DATE}", "--no-header", "--no-annotate", "--quiet"]


def resolve(platform, python=PYTHON, timeout=600):
    """The file's text for ``platform`` and Python ``python``: a header saying how it was made,
    then name==version lines. Raises RuntimeError with uv's words when the set does not resolve."""
    done = subprocess.run(uv() + command(platform, python)[1:], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env=uv_environment())
    if done.returncode != 0:
        raise RuntimeError(f"{platform} does not resolve:\n{done.stderr.strip()}")
    header = (f"# {platform}, Python {python}: the student's install (base + {', '.join(EXTRAS)})"
              f" as it resolves there.\n# Made by constraints/resolve.py: "
              f"{' '.join(command(platform, python))}\n")
    return header + done.stdout


def pins(text):
    """{name: version} of a set's text."""
    return dict(line.split("==", 1) for line in text.splitlines()
                if line.strip() and not line.startswith("#"))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="compare with the committed sets instead of writing them")
    args = parser.parse_args(argv)
    stale = []
    for platform in PLATFORMS:
        path, text = HERE / f"{platform}.txt", resolve(platform)
        if not args.check:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(ROOT)} ({len(pins(text))} packages)")
            continue
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        if old != text:
            stale.append("".join(difflib.unified_diff(old.splitlines(True), text.splitlines(True),
                                                      str(path.relative_to(ROOT)), "resolved now")))
    if stale:
        print("\n".join(stale) + "\nstale: run python constraints/resolve.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
