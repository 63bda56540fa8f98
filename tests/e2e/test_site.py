"""`make site`: the static site builds; every lesson page has its title and a figure, widgets
appear as snapshots, every exercise and the glossary have a page, links between pages resolve,
nothing is fetched from the network, and the picture of a kernel (lesson 03) is kept."""
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
FIGURE = re.compile(r'<img [^>]*src="data:image/png;base64,')
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
    progress = re.findall(r"^\[(\d+)/(\d+)\] lesson (\S+\.ipynb) \d+ s$", done.stdout, re.M)
    assert [int(k) for k, _, _ in progress] == list(range(1, len(LESSONS) + 1))
    assert {total for _, total, _ in progress} == {str(len(LESSONS))}
    assert sorted(name for _, _, name in progress) == [p.name for p in LESSONS]
    printed = done.stdout + done.stderr
    assert "ERROR" not in printed and "without encryption" not in printed, printed[-3000:]


def pages(site):
    return [p for p in site.rglob("*.html") if "static" not in p.relative_to(site).parts]


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda p: p.stem)
def test_lesson_page_has_its_title_and_a_figure(site, lesson):
    text = (site / "notebooks" / f"{lesson.stem}.html").read_text(encoding="utf-8")
    title = html.unescape(re.search(r"<title>(.*?)</title>", text, re.S).group(1)).strip()
    assert title == heading_of(lesson)
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
    home = (site / "index.html").read_text(encoding="utf-8")
    for lesson in LESSONS:
        assert f'href="notebooks/{lesson.stem}.html"' in home
    assert "course map" in home.lower()


def test_links_between_pages_resolve(site):
    broken = []
    for page in pages(site):
        for href in re.findall(r'href="([^"#]+)', page.read_text(encoding="utf-8")):
            if not re.match(r"[a-z][a-z0-9+.-]*:|/", href) and not (page.parent / href).exists():
                broken.append(f"{page.relative_to(site)} -> {href}")
    assert not broken, "broken links:\n" + "\n".join(broken)


def test_pages_load_nothing_from_the_network(site):
    for page in pages(site):
        sources = re.findall(r'<(?:script|link|img)[^>]+(?:src|href)="(https?:[^"]*)"',
                             page.read_text(encoding="utf-8"))
        assert not sources, f"{page.relative_to(site)} loads {sources}"
    lesson = (site / "notebooks" / "05_tiled_gemm.html").read_text(encoding="utf-8")
    assert 'href="https://colab.research.google.com/github/' in lesson      # the link stays


def test_lesson_03_shows_the_picture_of_a_kernel_with_its_race_in_red(site):
    text = (site / "notebooks" / "03_parallel_work_and_speedup.html").read_text(encoding="utf-8")
    pictures = re.findall(r'<div class="gemmlab-kernel-picture".*?</svg>', text, re.S)
    assert len(pictures) == 2, "lesson 03 draws the racy kernel and the fixed one"
    racy, fixed = pictures
    assert 'class="kp-fault kp-element"' in racy and 'class="kp-barrier"' not in racy
    assert "kp-fault" not in fixed and 'class="kp-barrier"' in fixed
