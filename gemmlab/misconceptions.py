"""The misconceptions the course material lists, and where the course answers each one.

``docs/misconceptions.md`` is a table: one row per misconception of a seed (the opening lecture,
002, and the unit, 000), paraphrased in English, with the places that answer it. A place is

* a known wrong answer of the bank, written `` `07.ring_send_mib` ← `32.0` `` (a Python literal,
  or ``inf``): a check given that answer must say "known wrong answer" and name the
  misconception; a function question's wrong answer is named by its position,
  `` `02.naive_matmul` ← wrong #1 ``;
* a demonstration cell of a lesson, written `` `notebooks/09_megatron_ffn.ipynb#fbb57bc6` ``: a code
  cell (by its id) that shows the wrong idea failing.

A row whose place is "—" is listed but not answered yet. :func:`problems` checks every reference;
:func:`coverage` counts the answered rows per seed.
"""
import ast
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "docs" / "misconceptions.md"

_ROW = re.compile(r"^\|\s*(?P<key>[A-Z]\d+)\s*\|\s*(?P<seed>\d{3})[^|]*\|(?P<text>[^|]+)\|(?P<where>.*)\|\s*$")
_WRONG_VALUE = re.compile(r"`(\d\d\.\w+)` ← `([^`]+)`")
_WRONG_INDEX = re.compile(r"`(\d\d\.\w+)` ← wrong #(\d+)")
_CELL = re.compile(r"`((?:notebooks|solutions)/[^`#]+\.ipynb)#([0-9A-Za-z_-]+)`")


@dataclass(frozen=True)
class Entry:
    """One listed misconception: its key, its seed, the paraphrase and the places answering it."""
    key: str
    seed: str
    text: str
    wrong_values: tuple     # (question id, answer written as a Python literal)
    wrong_indices: tuple    # (question id, 1-based position in the question's known wrongs)
    cells: tuple            # (notebook path, cell id)
    unread: tuple = ()      # parts of the "where" column that are neither of the above

    @property
    def answered(self):
        return bool(self.wrong_values or self.wrong_indices or self.cells)


def entries(path=TABLE):
    """The rows of the table, in order."""
    rows = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        m = _ROW.match(line)
        if m:
            where = m["where"]
            rest = [p.strip() for p in _CELL.sub("", _WRONG_INDEX.sub("", _WRONG_VALUE.sub(
                "", where))).split(";")]
            rows.append(Entry(m["key"], m["seed"], m["text"].strip(),
                              tuple(_WRONG_VALUE.findall(where)),
                              tuple((q, int(n)) for q, n in _WRONG_INDEX.findall(where)),
                              tuple(_CELL.findall(where)),
                              tuple(p for p in rest if p not in ("", "—"))))
    return rows


def wrong_value(literal):
    """The answer a row's `` ← `literal` `` stands for: a Python literal, or ``inf``."""
    return math.inf if literal == "inf" else ast.literal_eval(literal)


def _wrong_value_problem(qid, literal):
    from .grading import judge
    from .grading.bank import questions
    if qid not in questions():
        return f"no question {qid}"
    try:
        value = wrong_value(literal)
    except (ValueError, SyntaxError):
        return f"{qid} ← {literal}: not a Python literal"
    result = judge(qid, value)
    if result.status != "fail" or "known wrong answer" not in result.feedback:
        return f"{qid} ← {literal}: not one of its known wrong answers ({result.feedback[:60]}...)"
    return None


def _wrong_index_problem(qid, index):
    from .grading.bank import questions
    q = questions().get(qid)
    if q is None:
        return f"no question {qid}"
    if not 1 <= index <= len(q.wrong):
        return f"{qid} has {len(q.wrong)} known wrong answers, not a #{index}"
    return None


def _cell_problem(notebook, cell_id, root):
    path = Path(root) / notebook
    if not path.is_file():
        return f"no notebook {notebook}"
    cells = {c.get("id"): c for c in json.loads(path.read_text(encoding="utf-8"))["cells"]}
    if cell_id not in cells:
        return f"{notebook} has no cell {cell_id}"
    if cells[cell_id]["cell_type"] != "code":
        return f"{notebook}#{cell_id} is not a code cell: a demonstration must run"
    return None


def problems(rows=None, root=ROOT):
    """Every reference of the table that does not resolve, as a readable line."""
    found = []
    for e in rows if rows is not None else entries():
        checks = ([_wrong_value_problem(q, v) for q, v in e.wrong_values]
                  + [_wrong_index_problem(q, n) for q, n in e.wrong_indices]
                  + [_cell_problem(nb, c, root) for nb, c in e.cells])
        checks += [f"cannot read the reference {p!r}" for p in e.unread]
        found += [f"{e.key}: {p}" for p in checks if p]
    return found


def coverage(rows=None):
    """{seed: (answered, listed)} over the table's rows."""
    counts = {}
    for e in rows if rows is not None else entries():
        answered, listed = counts.get(e.seed, (0, 0))
        counts[e.seed] = (answered + e.answered, listed + 1)
    return counts
