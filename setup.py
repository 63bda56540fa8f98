"""The one build step pyproject.toml cannot express: the wheel carries the course itself.

The lesson and exercise notebooks, the recorded GPU runs the lessons read (benchmarks/**/*.json),
the glossary and the course's Jupyter settings (jupyter/: JupyterLab's overrides, the kernel spec
that `gemmlab lab` uses) are copied into the package as ``gemmlab/_course/``, so that a course installed from
a wheel (pip, Colab) finds them through ``gemmlab.course``. An editable install reads them from the
checkout instead and copies nothing. MANIFEST.in puts the same files into the sdist.
"""
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
COURSE_FILES = ("notebooks/*.ipynb", "exercises/*.ipynb", "benchmarks/**/*.json",
                "docs/glossary.md", "jupyter/**/*.json", "LICENSE")


class BuildWithCourse(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        target = Path(self.build_lib) / "gemmlab" / "_course"
        shutil.rmtree(target, ignore_errors=True)     # a file renamed or removed since the last build must not ship
        for pattern in COURSE_FILES:
            for source in sorted(ROOT.glob(pattern)):
                dest = target / source.relative_to(ROOT)
                self.mkpath(str(dest.parent))
                self.copy_file(str(source), str(dest))


setup(cmdclass={"build_py": BuildWithCourse})
