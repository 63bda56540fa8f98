"""`make site`: the static site builds (Sphinx, myst-nb, sphinx-book-theme); every lesson page has
its title and a figure, widgets appear as snapshots, every exercise, the setup pages and the
glossary have a page, links between pages resolve, nothing is fetched from the network (MathJax 3
is a local copy), and the picture of a kernel (lesson 03) is kept. In Chromium: the search page
finds a lesson by a word of its text, and the sidebar and previous/next links lead through the
course in order."""
import html
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "docs" / "site" / "build.py"
LESSONS = sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb"))
EXERCISES = sorted((ROOT / "exercises").glob("[0-9][0-9]_*.ipynb"))
FIGURE = re.compile(r'<img [^>]*src="(?:data:image/png;base64,|\.\./_images/[0-9a-f]+\.png")')
SNAPSHOT = re.compile(r'<div class="gemmlab-widget-snapshot">.*?</p>', re.S)


def heading_of(path):
    """The first level-1 heading of a notebook, as the page title must show it."""
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        found = re.search(r"^#\s+(.+?)\s*$", "".join(cell["source"]), re.M)
        if cell["cell_type"] == "markdown" and found:
            return found.group(1)
    raise AssertionError(f"{path.name} has no level-1 heading")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, str(BUILD), "--out", str(out), "--timeout", "300"],
                          capture_output=True, text=True, timeout=1200, cwd=ROOT)
    print(done.stdout)                  # how long each lesson took (shown on failure, or with -s)
    assert done.returncode == 0, f"the site did not build:\n{done.stderr[-5000:]}"
    return out, done


@pytest.fixture(scope="module")
def site(built):
    return built[0]


def test_the_build_shows_each_lesson_and_prints_no_error_or_warning(built):
    done = built[1]
    progress = re.findall(r"^\[(\d+)/(\d+)\] lesson (\S+\.ipynb) (?:\d+ s|as make test ran it)$",
                          done.stdout, re.M)
    assert [int(k) for k, _, _ in progress] == list(range(1, len(LESSONS) + 1))
    assert {total for _, total, _ in progress} == {str(len(LESSONS))}
    assert sorted(name for _, _, name in progress) == [p.name for p in LESSONS]
    printed = done.stdout + done.stderr
    assert "ERROR" not in printed and "without encryption" not in printed, printed[-3000:]


def pages(site):
    return [p for p in site.rglob("*.html") if "_static" not in p.relative_to(site).parts]


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_lesson_page_has_its_title_and_a_figure(site, lesson):
    text = (site / "notebooks" / f"{lesson.stem}.html").read_text(encoding="utf-8")
    title = html.unescape(re.search(r"<title>(.*?)</title>", text, re.S).group(1)).strip()
    assert title == f"{heading_of(lesson)} \u2014 gemmlab"
    has_figure = FIGURE.search(text) is not None
    assert has_figure, f"{lesson.name}: its page shows no figure (no <img>)"
    assert "application/vnd.jupyter.widget-view+json" not in text, "a widget left as a live view"


def test_widgets_become_snapshots_with_a_note(site):
    snapshots = [snap for page in pages(site) for snap in SNAPSHOT.findall(
        page.read_text(encoding="utf-8"))]
    assert snapshots, "no widget snapshot anywhere in the site"
    assert all("to use its controls" in snap for snap in snapshots)


def test_exercises_glossary_and_home_page_exist(site):
    for exercise in EXERCISES:
        assert (site / "exercises" / f"{exercise.stem}.html").is_file()
    assert "分块" in (site / "docs" / "glossary.html").read_text(encoding="utf-8")
    for page in ("install", "labs", "grading", "troubleshooting"):
        assert (site / "docs" / f"{page}.html").is_file(), page
    home = (site / "index.html").read_text(encoding="utf-8")
    for lesson in LESSONS:
        assert f'href="notebooks/{lesson.stem}.html"' in home
    assert "course map" in home.lower()


def test_links_between_pages_resolve(site):
    broken = []
    for page in pages(site):
        for href in re.findall(r'href="([^"#?]+)', page.read_text(encoding="utf-8")):
            if not re.match(r"[a-z][a-z0-9+.-]*:|/", href) and not (page.parent / href).exists():
                broken.append(f"{page.relative_to(site)} -> {href}")
    assert not broken, "broken links:\n" + "\n".join(broken)


def test_pages_load_nothing_from_the_network(site):
    for page in pages(site):
        text = page.read_text(encoding="utf-8")
        sources = re.findall(r'<(?:script|link|img)[^>]+(?:src|href)="(https?:[^"]*)"', text)
        assert not sources, f"{page.relative_to(site)} loads {sources}"
    lesson = (site / "notebooks" / "01_numbers_and_precision.html").read_text(encoding="utf-8")
    mathjax = re.search(r'<script[^>]+src="([^"?]*mathjax/tex-mml-chtml\.js)', lesson).group(1)
    assert (site / "notebooks" / mathjax).resolve().is_file()        # MathJax 3, here
    assert "MathJax.js?config=" not in lesson                             # not MathJax 2
    lesson = (site / "notebooks" / "05_tiled_gemm.html").read_text(encoding="utf-8")
    assert 'href="https://colab.research.google.com/github/' in lesson      # the link stays


def test_lesson_03_shows_the_picture_of_a_kernel_with_its_race_in_red(site):
    text = (site / "notebooks" / "03_parallel_work_and_speedup.html").read_text(encoding="utf-8")
    pictures = re.findall(r'<div class="gemmlab-kernel-picture".*?</svg>', text, re.S)
    assert len(pictures) == 2, "lesson 03 draws the racy kernel and the fixed one"
    racy, fixed = pictures
    assert 'class="kp-fault kp-element"' in racy and 'class="kp-barrier"' not in racy
    assert "kp-fault" not in fixed and 'class="kp-barrier"' in fixed


# -- in the browser: search and navigation ---------------------------------------------------

@pytest.fixture
def tab(browser):
    page = browser.new_page()
    yield page
    page.close()


def test_search_finds_the_lesson_that_teaches_a_word(site, tab):
    """Sphinx's search, from a file:// page as a student opens site/index.html: "Amdahl" leads
    to lesson 03, and the search box is on every page."""
    tab.goto((site / "notebooks" / "05_tiled_gemm.html").as_uri())
    assert tab.locator("form.bd-search input[name=q]").count() >= 1
    tab.goto((site / "search.html").as_uri() + "?q=Amdahl")
    results = tab.locator("#search-results ul.search li a")
    results.first.wait_for(timeout=30_000)
    hrefs = [results.nth(k).get_attribute("href") for k in range(results.count())]
    assert any("notebooks/03_parallel_work_and_speedup.html" in h for h in hrefs), hrefs


def test_the_sidebar_and_previous_next_links_lead_through_the_course(site, tab):
    tab.goto((site / "notebooks" / "05_tiled_gemm.html").as_uri())
    sidebar = [tab.locator("nav.bd-docs-nav a").nth(k).get_attribute("href")
               for k in range(tab.locator("nav.bd-docs-nav a").count())]
    for lesson in LESSONS:        # every other lesson by its page; this one is the theme's "#"
        assert (f"{lesson.stem}.html" if lesson.stem != "05_tiled_gemm" else "#") in sidebar, lesson
    for page in ("install", "troubleshooting", "glossary"):
        assert f"docs/{page}.html" in " ".join(sidebar), page
    previous = tab.locator("a.left-prev").get_attribute("href")
    assert previous.endswith("04_roofline_and_data_movement.html"), previous
    tab.locator("a.right-next").click()
    tab.wait_for_load_state()
    assert tab.url.endswith("notebooks/06_column_row_parallel.html")
    assert tab.title().startswith(heading_of(LESSONS[6]))
