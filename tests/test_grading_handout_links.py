"""Every link of every notebook in the student folder resolves there, in both installs: the folder
`make lab` makes from a clone, and the one `gemmlab work DIR` makes from a wheel's course (the
files setup.py puts into the wheel, copied as it copies them)."""
import ast
import json
import re
import shutil
from pathlib import Path
from urllib.parse import unquote

import pytest

from gemmlab import course
from gemmlab.grading import handout

ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"\]\(([^)\s]+)\)|(?:href|src)=\"([^\"]+)\"")


def links(path):
    """The relative link targets in the markdown cells of a notebook (or in a markdown file)."""
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    else:
        text = path.read_text(encoding="utf-8")
    found = []
    for match in LINK.finditer(text):
        target = unquote((match.group(1) or match.group(2)).split("#")[0])
        if target and not re.match(r"[a-z]+:", target) and target != "...":
            found.append(target)
    return found


def broken_links(folder):
    broken, followed = [], 0
    for path in sorted(folder.rglob("*.ipynb")) + sorted(folder.rglob("*.md")):
        for target in links(path):
            followed += 1
            if not (path.parent / target).exists():
                broken.append(f"{path.relative_to(folder)} -> {target}")
    return broken, followed


def _wheel_course(dest):
    """The course as setup.py copies it into the wheel (gemmlab/_course/)."""
    tree = ast.parse((ROOT / "setup.py").read_text())
    patterns = next(ast.literal_eval(node.value) for node in ast.walk(tree)
                    if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "")
                    == "COURSE_FILES")
    for pattern in patterns:
        for source in ROOT.glob(pattern):
            target = dest / source.relative_to(ROOT)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, target)
    return dest


def _check(work):
    broken, followed = broken_links(work)
    assert followed > 60, followed           # the course's lesson/exercise/glossary links
    assert not broken, "\n".join(broken)
    assert len(list((work / "notebooks").glob("*.ipynb"))) == len(list((ROOT / "notebooks").glob("*.ipynb")))
    assert len(list((work / "exercises").glob("*.ipynb"))) == len(list((ROOT / "exercises").glob("*.ipynb")))


def test_every_link_resolves_in_the_student_folder_of_a_clone(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)                  # `make lab` runs gemmlab work in the checkout
    assert handout.work_main(None, str(tmp_path / "work")) == 0
    _check(tmp_path / "work")


def test_every_link_resolves_in_the_student_folder_of_a_wheel(tmp_path, monkeypatch):
    installed = _wheel_course(tmp_path / "site" / "gemmlab" / "_course")
    monkeypatch.setattr(course, "root", lambda: installed)
    monkeypatch.chdir(tmp_path)              # no ./exercises: the installed course is used
    assert handout.work_main(None, str(tmp_path / "mine")) == 0
    _check(tmp_path / "mine")


def test_the_link_follower_finds_a_broken_link(tmp_path):
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "00_x.ipynb").write_text(json.dumps({"cells": [
        {"cell_type": "markdown", "source": ["[ex](../exercises/00_x.ipynb) [web](https://a.b)"]}]}))
    assert broken_links(tmp_path) == (["notebooks/00_x.ipynb -> ../exercises/00_x.ipynb"], 1)


def test_a_session_leaves_the_repository_notebooks_alone():
    """`make lab` serves the student folder (`gemmlab lab`), never notebooks/ itself."""
    recipe = (ROOT / "Makefile").read_text().split("\nlab:", 1)[1].split("\n\n", 1)[0]
    assert "gemmlab lab $(WORK)" in recipe and "jupyter lab" not in recipe


@pytest.mark.parametrize("path", sorted((ROOT / "notebooks").glob("*.ipynb")), ids=lambda p: p.name)
def test_lessons_send_students_to_their_own_exercises(path):
    text = path.read_text(encoding="utf-8")
    assert not re.search(r"(?<!your )`exercises/\d\d", text), "name the student folder's copy"


def test_lesson_00s_course_map_lists_every_lesson():
    """The map at the end of lesson 00 (its own section) links every lesson notebook, 12b too."""
    cells = json.loads((ROOT / "notebooks" / "00_start_here.ipynb").read_text())["cells"]
    course_map = next("".join(c["source"]) for c in cells
                      if "".join(c["source"]).startswith("## 12. The course map"))
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb")):
        assert f"]({path.name})" in course_map, path.name
