"""The instructors' docs agree with the course and with themselves: the student folder is
DIR/notebooks and DIR/exercises (never DIR/lessons), and the site build's progress counts every
lesson notebook ([k/17]: 00 to 15 and 12b)."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEXTS = ["README.md", "gemmlab_grader/README.md", "gemmlab/cli.py", "docs/site/build.py",
         *[str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md")]]


def test_the_student_folder_is_named_the_same_everywhere():
    for name in TEXTS:
        assert "DIR/lessons" not in (ROOT / name).read_text(), name


def test_every_lesson_count_is_the_number_of_lesson_notebooks():
    lessons = len(list((ROOT / "notebooks").glob("[0-9][0-9]*_*.ipynb")))
    counts = {name: re.findall(r"\[k/(\d+)\]", (ROOT / name).read_text()) for name in TEXTS}
    assert any(counts.values())
    assert all(int(n) == lessons for found in counts.values() for n in found), counts
