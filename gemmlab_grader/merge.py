"""``gemmlab-grade merge --out DIR SHARD_OUTPUT...``: one report for a class graded in shards
(``gemmlab-grade SUBMISSIONS --shard i/n --out grades-i`` for i = 1..n, run by a scheduler). It
reads each shard's ``grades.json`` (size-checked, every field checked for its kind), refuses
shards that do not fit together (two of one number, different n, one notebook in two shards; exit
status 2), names the shards missing, and writes the whole class's reports with each shard's run
information (sandbox or --trusted, warnings).
"""
import json
import sys
from pathlib import Path

from gemmlab.judging import FAIL, NOT_ATTEMPTED, PASS

from . import publish
from .folders import read_at
from .grade import NotebookGrade

MAX_JSON = 512 << 20
_STATUSES = {PASS, FAIL, NOT_ATTEMPTED}


class ShardError(ValueError):
    """A shard output that cannot be merged; the message says which and why."""


def _texts(value, what):
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                              for k, v in value.items()):
        raise ShardError(f"{what} is not a table of texts")
    return {k[:200]: v[:10_000] for k, v in value.items()}


def _grade(row):
    """A NotebookGrade from one row of grades.json, each field checked."""
    if not isinstance(row, dict):
        raise ShardError("a notebook row is not an object")
    for name in ("student", "notebook", "lesson"):
        if not isinstance(row.get(name), str):
            raise ShardError(f"a notebook row has no {name}")
    results = _texts(row.get("results"), "results")
    if not set(results.values()) <= _STATUSES:
        raise ShardError(f"{row['notebook'][:80]}: unknown verdicts {set(results.values()) - _STATUSES}")
    notes = row.get("notes", [])
    if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
        raise ShardError(f"{row['notebook'][:80]}: notes are not texts")
    seconds = row.get("seconds", 0.0)
    worth, credit = row.get("points", {}), row.get("credit", {})
    for table in (worth, credit):
        if not isinstance(table, dict) or not all(
                k in results and isinstance(v, (int, float)) and not isinstance(v, bool)
                for k, v in table.items()):
            raise ShardError(f"{row['notebook'][:80]}: points or credit are not numbers of its "
                             f"questions")
    return NotebookGrade(row["student"], row["notebook"], row["lesson"][:2], results,
                         _texts(row.get("feedback", {}), "feedback"), [n[:2000] for n in notes],
                         float(seconds) if isinstance(seconds, (int, float)) else 0.0, worth,
                         credit)


def load(folder):
    """(run information, [NotebookGrade]) of one shard's output folder, or ShardError."""
    try:
        data = read_at(None, Path(folder) / "grades.json", MAX_JSON)     # None: no dir_fd
    except OSError as exc:
        raise ShardError(f"{folder}: no readable grades.json ({exc.strerror or exc})") from None
    if data is None or len(data) > MAX_JSON:
        raise ShardError(f"{folder}/grades.json is not a regular file of at most "
                         f"{MAX_JSON >> 20} MiB")
    try:
        info = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise ShardError(f"{folder}/grades.json is not JSON ({str(exc)[:100]})") from None
    if not isinstance(info, dict) or not isinstance(info.get("notebooks"), list):
        raise ShardError(f"{folder}/grades.json is not the output of gemmlab grade")
    try:
        grades = [_grade(row) for row in info.pop("notebooks")]
    except ShardError as exc:
        raise ShardError(f"{folder}/grades.json: {exc}") from None
    return info, grades


def merge(outputs):
    """(run information, [NotebookGrade]) of the whole class from the shards' (folder, info,
    grades), or ShardError if they do not fit together."""
    numbers, seen, grades, runs, warnings = {}, {}, [], [], []
    for folder, info, mine in outputs:
        shard = info.get("shard")
        if shard is not None:
            if not (isinstance(shard, list) and len(shard) == 2
                    and all(type(x) is int for x in shard) and 1 <= shard[0] <= shard[1]):
                raise ShardError(f"{folder}: a malformed shard number {str(shard)[:40]}")
            shard = tuple(shard)
        label = f"shard {shard[0]}/{shard[1]}" if shard else str(folder)
        if shard in numbers:
            raise ShardError(f"{folder} and {numbers[shard]} are both {label}")
        numbers[shard] = folder
        for g in mine:
            if g.notebook in seen:
                raise ShardError(f"{g.notebook[:80]} is graded in both {seen[g.notebook]} and "
                                 f"{folder}")
            seen[g.notebook] = folder
        grades += mine
        texts = info.get("warnings") if isinstance(info.get("warnings"), list) else []
        warnings += [f"{label}: {w[:1000]}" for w in texts if isinstance(w, str)]
        runs.append({"shard": list(shard) if shard else None, "folder": str(folder),
                     **{k: info.get(k) for k in ("sandbox", "jobs", "students",
                                                 "interrupted", "trusted")}})
    counts = {n for _i, n in filter(None, numbers)}
    if len(counts) > 1 or (counts and None in numbers):
        raise ShardError(f"these are not shards of one run: {sorted(map(str, numbers))}")
    if counts:
        n = counts.pop()
        missing = sorted(set(range(1, n + 1)) - {i for i, _n in numbers})
        if missing:
            warnings.insert(0, f"shards missing: {', '.join(f'{i}/{n}' for i in missing)} (their "
                               f"students are not in this report)")
    merged = {"shards": runs, "sandbox": all(r["sandbox"] is True for r in runs),
              "warnings": warnings, "trusted": any(r["trusted"] for r in runs),
              "interrupted": any(r["interrupted"] for r in runs)}
    return merged, sorted(grades, key=lambda g: g.notebook)


def main(shards, out):
    """The merge command; the exit status."""
    try:
        outputs = [(folder, *load(folder)) for folder in shards]
        info, grades = merge(outputs)
    except ShardError as exc:
        print(f"gemmlab-grade merge: {exc}", file=sys.stderr)
        return 2
    out = Path(out).resolve()
    if any(out == Path(f).resolve() for f in shards):
        print("gemmlab-grade merge: --out must be a folder of its own, not one of the shards'",
              file=sys.stderr)
        return 2
    publish.finish(grades, out, info)
    return 0
