"""Build the course as a static HTML site, for reading without Jupyter (``make site``), with the
field's tool: Sphinx, myst-nb (notebooks and MyST markdown) and the book theme (sphinx-book-theme,
built on the PyData theme: the course in a sidebar, full-text search, previous/next links),
formulas by MathJax 3.

Every lesson in notebooks/ is executed on the simulator backend as gemmlab.notebook_run runs
notebooks (each in a fresh local kernel, under a time limit per cell: a lesson that stalls or
fails is a failure, naming the lesson and the cell, and then nothing is written), unless `make
test` executed it already with the same lesson, package and installed versions (lesson_runs.py:
then its run is taken, which in CI saves running every lesson a second time). The executed
notebooks, with each widget made a static picture of its state (widget_snapshot.py), go to Sphinx
with execution off; the exercise notebooks as they are, unexecuted; the home page holds the table
of contents and the README's course map; the setup pages (install, labs, grading,
troubleshooting) and the glossary come from docs/. The site keeps the repository's layout:

    site/index.html  site/notebooks/NN_*.html  site/exercises/NN_*.html  site/docs/glossary.html
    site/search.html  site/_static/mathjax/  (MathJax 3, so that formulas render offline)

    python docs/site/build.py [--out site] [--jobs N] [--timeout SECONDS_PER_CELL]

It prints "[k/18] lesson NAME S s" as each lesson ends (18: lessons 00 to 16 and 12b), or
"[k/18] lesson NAME as make test ran it".
"""
import argparse
import os
import re
import shutil
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import nbformat

from gemmlab import colab, notebook_run

import lesson_runs
from widget_snapshot import WidgetSnapshotPreprocessor

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
DOCS = ("install", "labs", "grading", "grade-a-class", "add-a-question", "troubleshooting",
        "glossary")                                             # docs/ pages on the site
# a link to a markdown page of the repository: [words](../docs/x.md#part)
MD_LINK = re.compile(r"\[([^\]]+)\]\(((?![a-z][a-z0-9+.-]*:)[^)#\s]+\.md)(#[^)]*)?\)")


def mathjax():
    """MathJax 3 (its es5 bundles, as django-static-mathjax ships them: `make site`'s extra),
    copied into the site so that formulas render offline."""
    import mathjax as package
    return Path(package.__file__).parent / "static" / "mathjax" / "es5"


def lessons():
    return sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb"))     # 12b_...: part 2 of lesson 12


def exercises():
    return sorted((ROOT / "exercises").glob("[0-9][0-9]_*.ipynb"))


def execute(path, timeout):
    """Run a lesson as gemmlab.notebook_run runs every notebook (a fresh local kernel in its
    folder, ``timeout`` seconds per cell); returns (notebook or None, the failure or None, seconds)."""
    start = time.perf_counter()
    try:
        nb, failure = notebook_run.execute(path, timeout), None
    except notebook_run.NotebookFailure as error:
        nb, failure = None, str(error)
    return nb, failure, time.perf_counter() - start


def run_lessons(paths, jobs, timeout):
    """Execute the lessons, ``jobs`` at a time, printing "[k/n] lesson NAME S s" as each ends;
    returns {path: (notebook or None, failure or None)}. A lesson that `make test` ran with
    everything it depends on as it is now is taken as it ran there (:mod:`lesson_runs`), printed
    as "[k/n] lesson NAME as make test ran it"."""
    results = {}
    for path in paths:
        executed = lesson_runs.kept(path)
        if executed is not None:
            results[path] = executed, None
            print(f"[{len(results)}/{len(paths)}] lesson {path.name} as make test ran it",
                  flush=True)
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        running = {pool.submit(execute, path, timeout): path
                   for path in paths if path not in results}
        for future in as_completed(running):
            nb, failure, seconds = future.result()
            path = running[future]
            results[path] = nb, failure
            print(f"[{len(results)}/{len(paths)}] lesson {path.name} {seconds:.0f} s"
                  + (" FAILED" if failure else ""), flush=True)
    return results


def for_the_site(nb, here):
    """The notebook at ``here`` (relative to the repository root) as the site shows it: widgets
    as static snapshots, the Colab badge a plain link (the site loads nothing from the network),
    links to pages the site does not show written as their names (:func:`on_the_site`)."""
    nb, _ = WidgetSnapshotPreprocessor().preprocess(nb, {})
    for cell in nb.cells:
        if cell.get("id") == colab.LINK_ID:
            cell.source = cell.source.replace(f"[![Open in Colab]({colab.BADGE})]",
                                              "[Open in Colab]")
        if cell.cell_type == "markdown":
            cell.source = on_the_site(cell.source, here)
    return nbformat.from_dict(nb)       # the snapshots are plain dicts


def on_the_site(markdown, here):
    """``markdown`` (of the page at ``here``, relative to the repository root) with its links to
    the repository's .md pages that the site does not render written as text naming the file,
    so that no link on the site breaks; links to pages it renders are kept."""
    def keep_or_name(m):
        target = (ROOT / here).parent.joinpath(m.group(2)).resolve()
        if target.parent == ROOT / "docs" and target.stem in DOCS:
            return m.group(0)
        return f"`{m.group(2)}`" if m.group(1) == m.group(2) else f"{m.group(1)} (`{m.group(2)}`)"
    return MD_LINK.sub(keep_or_name, markdown)


def course_map():
    """The README's "The course map" section (its links are relative to the repository root,
    as the home page is to the site's root)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(r"^## The course map\n.*?(?=^## |\Z)", readme, re.M | re.S)
    return on_the_site(found.group(0), "index.md") if found else ""


def home_page(lessons, exercises):
    """MyST markdown of the home page: the sidebar's tables of contents, then the course map."""
    def toc(caption, entries):
        return ["```{toctree}", f":caption: {caption}", ":maxdepth: 1", "", *entries, "```", ""]
    return "\n".join(
        ["# gemmlab: the course, to read", "",
         "Each lesson was run from top to bottom on the CPU simulator backend to make this site; "
         "interactive widgets are shown as they were drawn then. To run the code and use the "
         "widgets, open the notebooks in JupyterLab (`make lab`). Search the whole course with "
         "the search box.", ""]
        + toc("Lessons", [f"notebooks/{p.stem}" for p in lessons])
        + toc("Exercises (unexecuted: run them in JupyterLab)",
              [f"exercises/{p.stem}" for p in exercises])
        + toc("Setting up and reference", [f"docs/{name}" for name in DOCS])
        + [course_map()])


CONF = """# Written by docs/site/build.py for one build.
project = "gemmlab"
extensions = ["myst_nb"]
nb_execution_mode = "off"                   # executed by build.py, as every tool runs notebooks
myst_enable_extensions = ["dollarmath", "amsmath"]
html_theme = "sphinx_book_theme"           # the PyData theme with the whole course in its sidebar
html_title = "gemmlab"
html_static_path = ["_static"]
html_css_files = ["gemmlab.css"]
mathjax_path = "mathjax/tex-mml-chtml.js"   # MathJax 3, from _static: no network
html_theme_options = {"home_page_in_toc": True, "show_navbar_depth": 1,
                      "use_download_button": False, "use_fullscreen_button": False}
suppress_warnings = ["myst.header", "misc.highlighting_failure"]
html_show_sourcelink = False
html_copy_source = False
smartquotes = False                         # titles and text as written
"""


def stage(source, executed, exercise_paths):
    """Write the Sphinx project into ``source``: conf.py, the home page, the executed lessons,
    the exercises, the docs pages and the static files."""
    for folder in ("notebooks", "exercises", "docs", "_static"):
        (source / folder).mkdir(parents=True)
    (source / "conf.py").write_text(CONF, encoding="utf-8")
    (source / "index.md").write_text(home_page(list(executed), exercise_paths), encoding="utf-8")
    for path, nb in executed.items():
        nbformat.write(for_the_site(nb, f"notebooks/{path.name}"), source / "notebooks" / path.name)
    for path in exercise_paths:
        nb = nbformat.read(path, as_version=4)
        nbformat.write(for_the_site(nb, f"exercises/{path.name}"), source / "exercises" / path.name)
    for name in DOCS:
        text = (ROOT / "docs" / f"{name}.md").read_text(encoding="utf-8")
        (source / "docs" / f"{name}.md").write_text(on_the_site(text, f"docs/{name}.md"),
                                                    encoding="utf-8")
    shutil.copytree(mathjax(), source / "_static" / "mathjax")
    shutil.copy(HERE / "gemmlab.css", source / "_static" / "gemmlab.css")


def sphinx(source, out):
    """Sphinx's HTML build of ``source`` into ``out``; its warnings and errors go to stderr."""
    from sphinx.cmd.build import build_main
    return build_main(["-b", "html", "-q", "-j", "1", str(source), str(out)])


def build(out, jobs, timeout):
    """Build the site into ``out``; returns the failures (one text per lesson that did not run to
    the end, or Sphinx's). When anything fails, nothing is written: a site is never left with a
    lesson missing or incomplete."""
    lesson_runs.set_environment(os.environ.__setitem__, lambda name: os.environ.pop(name, None))
    paths = lessons()
    results = run_lessons(paths, jobs, timeout)
    failed = [results[path][1] for path in paths if results[path][1]]
    if failed:
        return failed
    with tempfile.TemporaryDirectory(prefix="gemmlab-site-") as work:
        source, html = Path(work) / "source", Path(work) / "html"
        stage(source, {path: results[path][0] for path in paths}, exercises())
        if sphinx(source, html) != 0:
            return ["Sphinx could not build the site (its messages are above)"]
        shutil.rmtree(html / ".doctrees")
        for name in {p.name for p in html.iterdir()} | {"static"}:  # "static": the old builder's
            stale = out / name                      # only what this build writes is replaced
            shutil.rmtree(stale) if stale.is_dir() else stale.unlink(missing_ok=True)
        shutil.copytree(html, out, dirs_exist_ok=True)
    return []


def seconds(text):
    """A whole number of seconds > 0 (0 or less would switch nbclient's limit off)."""
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a whole number of seconds > 0, got {text}")
    return value


def parser():
    """The command line (the limit per cell defaults to the course's, read now)."""
    arguments = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    arguments.add_argument("--out", type=Path, default=ROOT / "site")
    arguments.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                           help="lessons executed at once (default: one per core)")
    arguments.add_argument("--timeout", type=seconds, default=notebook_run.cell_timeout(),
                           help=f"seconds per cell (default: {notebook_run.cell_timeout()}; "
                                "GEMMLAB_CELL_TIMEOUT sets it for every tool)")
    return arguments


def main(argv=None):
    args = parser().parse_args(argv)
    failed = build(args.out.resolve(), args.jobs, args.timeout)
    if failed:
        print(f"{len(failed)} lesson(s) did not run to the end; the site was not written:\n\n"
              + "\n\n".join(failed), file=sys.stderr)
        return 1
    print(f"site written to {args.out}/index.html")
    return 0


if __name__ == "__main__":
    sys.exit(main())
