"""Build the course as a static HTML site, for reading without Jupyter (``make site``).

Every lesson in notebooks/ is executed on the simulator backend as gemmlab.notebook_run runs
notebooks (each in a fresh local kernel, under a time limit per cell: a lesson that stalls or
fails is a failure, and then nothing is written) and rendered with nbconvert's JupyterLab
template, extended in templates/gemmlab with a navigation bar; widgets become a static picture of
their state (widget_snapshot.py). The exercise notebooks are rendered
as they are, unexecuted. The home page holds the table of contents and the README's course map,
and docs/glossary.md becomes docs/glossary.html. Links between notebooks and to .md pages are
pointed at the rendered pages, so the site keeps the repository's layout:

    site/index.html  site/notebooks/NN_*.html  site/exercises/NN_*.html  site/docs/glossary.html
    site/static/mathjax/   (MathJax, so that the formulas render without a network)

    python docs/site/build.py [--out site] [--jobs N] [--timeout SECONDS_PER_CELL]

It prints "[k/18] lesson NAME S s" as each lesson ends (18: lessons 00 to 16 and 12b).
"""
import argparse
import os
import re
import shutil
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

import nbformat
from nbconvert import HTMLExporter

from gemmlab import colab, notebook_run

from widget_snapshot import WidgetSnapshotPreprocessor

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = Path(__file__).resolve().parent / "templates"
MATHJAX_CONFIG = "TeX-AMS-MML_HTMLorMML-full,Safe"
# a relative link to a notebook or a markdown page: href="../exercises/01_x.ipynb#part"
LOCAL_PAGE_LINK = re.compile(r'href="(?![a-z][a-z0-9+.-]*:|#|/)([^"#]*)\.(?:ipynb|md)(#[^"]*)?"')


def mathjax():
    """MathJax 2 as jupyter-server-mathjax (`make site`'s extra) ships it, copied into the site so
    that formulas render offline."""
    import jupyter_server_mathjax
    return Path(jupyter_server_mathjax.__file__).parent / "static"


def lessons():
    return sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb"))     # 12b_...: part 2 of lesson 12


def exercises():
    return sorted((ROOT / "exercises").glob("[0-9][0-9]_*.ipynb"))


def title_of(nb, fallback):
    """The notebook's first level-1 heading, or ``fallback``."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            found = re.search(r"^#\s+(.+?)\s*$", cell.source, re.M)
            if found:
                return found.group(1)
    return fallback


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
    returns {path: (notebook or None, failure or None)}."""
    results = {}
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        running = {pool.submit(execute, path, timeout): path for path in paths}
        for done, future in enumerate(as_completed(running), 1):
            nb, failure, seconds = future.result()
            path = running[future]
            results[path] = nb, failure
            print(f"[{done}/{len(paths)}] lesson {path.name} {seconds:.0f} s"
                  + (" FAILED" if failure else ""), flush=True)
    return results


def render(nb, title, site_root):
    """A page of the site: nbconvert's lab template, widgets as snapshots, links to .html."""
    exporter = HTMLExporter(
        template_name="gemmlab", extra_template_basedirs=[str(TEMPLATES)],
        mathjax_url=f"{site_root}static/mathjax/MathJax.js?config={MATHJAX_CONFIG}")
    exporter.register_preprocessor(WidgetSnapshotPreprocessor(), enabled=True)
    for cell in nb.cells:           # the site loads nothing from the network: a link, no badge
        if cell.get("id") == colab.LINK_ID:
            cell.source = cell.source.replace(f"[![Open in Colab]({colab.BADGE})]",
                                              "[Open in Colab]")
    nb.metadata["title"] = title
    body, _ = exporter.from_notebook_node(nb, resources={"site_root": site_root})
    return LOCAL_PAGE_LINK.sub(lambda m: f'href="{m.group(1)}.html{m.group(2) or ""}"', body)


def markdown_page(text):
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(text)])


def course_map():
    """The README's "The course map" section (its links are relative to the repository root,
    as the home page is to the site's root)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(r"^## The course map\n.*?(?=^## |\Z)", readme, re.M | re.S)
    return on_the_site(found.group(0)) if found else ""


def on_the_site(markdown):
    """``markdown`` with its links to the repository's .md pages that the site does not render
    (all but the glossary) written as text naming the file, so that no link on the site breaks."""
    return re.sub(r"\[([^\]]+)\]\(((?!docs/glossary\.md)[^)#]+\.md)(#[^)]*)?\)",
                  lambda m: (f"`{m.group(2)}`" if m.group(1) == m.group(2)
                             else f"{m.group(1)} (`{m.group(2)}`)"), markdown)


def home_page(lesson_titles, exercise_titles):
    """Markdown of the home page: the table of contents, then the course map."""
    exercise_stems = {p.stem for p in exercise_titles}
    lines = ["# gemmlab: the course, to read", "",
             "Each lesson was run from top to bottom on the CPU simulator backend to make this "
             "site; interactive widgets are shown as they were drawn then. To run the code and "
             "use the widgets, open the notebooks in JupyterLab (`make lab`).", "",
             "## Contents", "", "### Lessons", ""]
    for path, title in lesson_titles.items():
        extra = (f" ([exercises](exercises/{path.stem}.ipynb))"
                 if path.stem in exercise_stems else "")
        lines.append(f"* [{title}](notebooks/{path.name}){extra}")
    lines += ["", "### Exercises (unexecuted: run them in JupyterLab)", ""]
    lines += [f"* [{title}](exercises/{path.name})" for path, title in exercise_titles.items()]
    lines += ["", "### Reference", "", "* [Glossary · 术语表](docs/glossary.md)", "",
              course_map()]
    return "\n".join(lines)


def write(out, relative, text):
    path = out / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def build(out, jobs, timeout):
    """Build the site into ``out``; returns the failures (one text per lesson that did not run to
    the end). When a lesson fails, nothing is written: a site is never left with a lesson missing
    or incomplete."""
    os.environ["GEMMLAB_BACKEND"] = "sim"
    os.environ.pop("MPLBACKEND", None)          # figures drawn inline, as in JupyterLab
    paths = lessons()
    results = run_lessons(paths, jobs, timeout)
    failed = [results[path][1] for path in paths if results[path][1]]
    if failed:
        return failed

    for stale in ("notebooks", "exercises", "docs", "static", "index.html"):
        target = out / stale
        shutil.rmtree(target) if target.is_dir() else target.unlink(missing_ok=True)
    shutil.copytree(mathjax(), out / "static" / "mathjax")
    lesson_titles = {}
    for path in paths:
        nb = results[path][0]
        lesson_titles[path] = title_of(nb, path.stem)
        write(out, f"notebooks/{path.stem}.html", render(nb, lesson_titles[path], "../"))

    exercise_titles = {}
    for path in exercises():
        nb = nbformat.read(path, as_version=4)
        exercise_titles[path] = title_of(nb, path.stem)
        write(out, f"exercises/{path.stem}.html", render(nb, exercise_titles[path], "../"))

    glossary = (ROOT / "docs" / "glossary.md").read_text(encoding="utf-8")
    write(out, "docs/glossary.html", render(markdown_page(glossary), "Glossary", "../"))
    write(out, "index.html", render(markdown_page(home_page(lesson_titles, exercise_titles)),
                                    "gemmlab", ""))
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
