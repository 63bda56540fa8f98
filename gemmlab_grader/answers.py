"""Answers as data, read back in the grader: :func:`check` reads what the runner
(:mod:`gemmlab_grader.runner`, on the student's side, so possibly forged) handed back, two frames
(:func:`pack`): the run report and the answers file its kernel wrote
(:func:`gemmlab.judging.collected.extract`, values as :mod:`gemmlab.judging.values` encodes them).
All of it is size-checked first (:data:`MAX_OUTPUT`, 5 MiB: the costliest JSON of that size found,
200,000 encoded numbers, takes 94 MiB to read); only known fields come out, texts cut to their
length, every value decoded (all within :data:`~gemmlab.judging.collected.ANSWER_BYTES`) and
encoded again.
"""
import json

from gemmlab.judging.collected import ANSWER_BYTES      # the kernel's budget, read back
from gemmlab.judging import values
from gemmlab.judging.worker import pack, unpack  # noqa: F401 (the runner's frames)

MAX_REPORT = 1 << 20
MAX_SOURCE = 1 << 20
MAX_ANSWERS = 4 << 20             # the answers file: the values in base64, code sources, JSON
MAX_OUTPUT = MAX_REPORT + MAX_ANSWERS + 16          # what the runner may send in all
MAX_ENTRIES = 1000


def _text(value, limit):
    return str(value)[:limit] if isinstance(value, (str, int, float)) else ""


def _report(raw):
    """The runner's report with only its known fields, each of its kind and length."""
    report = json.loads(raw.decode("utf-8"))
    if not isinstance(report, dict):
        raise ValueError("the run report is not an object")
    errors = []
    for error in (report.get("errors") if isinstance(report.get("errors"), list) else [])[:20]:
        if isinstance(error, dict):
            errors.append({"cell": _text(error.get("cell"), 20),
                           "ename": _text(error.get("ename"), 80),
                           "evalue": _text(error.get("evalue"), 300)})
    printed = report.get("output_bytes")
    return {"errors": errors, "stopped": _text(report.get("stopped") or "", 300),
            "output_bytes": printed if type(printed) is int and printed >= 0 else 0,
            "answers_problem": _text(report.get("answers_problem") or "", 300)}


def _entry(entry, budget):
    """One collected answer in its checked form (see gemmlab.judging.collected.extract for the
    shapes)."""
    if not isinstance(entry, dict):
        return {"error": "a malformed answer entry"}
    checked = {}
    if isinstance(entry.get("error"), str):
        checked["error"] = entry["error"][:300]
    if entry.get("missing") is True:
        return {"missing": True}
    if "source" in entry:
        source, name = entry.get("source"), entry.get("name")
        if not (isinstance(source, str) and isinstance(name, str)) or len(source) > MAX_SOURCE:
            return {"error": "a malformed or too long code answer"}
        return dict(checked, source=source, name=name[:200])
    if "value" in entry:
        try:
            checked["value"] = values.encode(values.decode(entry["value"], budget))
        except values.DecodeError as exc:
            checked["error"] = f"could not be read back: {str(exc)[:200]}"
    return checked or {"error": "a malformed answer entry"}


def _answers(raw):
    """{question id: checked entry} from the answers file's bytes."""
    collected = json.loads(raw.decode("utf-8"))
    if not isinstance(collected, dict) or not isinstance(collected.get("answers"), dict):
        raise ValueError("not an object of answers")
    if len(collected["answers"]) > MAX_ENTRIES:
        raise ValueError(f"more than {MAX_ENTRIES} answers")
    budget = values.Budget(ANSWER_BYTES)         # one for all the answers together
    return {str(q)[:100]: _entry(e, budget) for q, e in collected["answers"].items()}


def check(stream):
    """{"run": report, "answers": {...} or None, "problem": why there are none} read from the
    runner's output ``stream``."""
    try:
        run = _report(unpack(stream, MAX_REPORT) or b"")
        raw = unpack(stream, MAX_ANSWERS)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        return {"run": None, "answers": None, "problem": f"the runner's report could not be read "
                                                         f"({str(exc)[:150]})"}
    if not raw:
        return {"run": run, "answers": None, "problem": run["answers_problem"]}
    try:
        return {"run": run, "answers": _answers(raw), "problem": ""}
    except (ValueError, UnicodeDecodeError, RecursionError, values.DecodeError) as exc:
        return {"run": run, "answers": None,
                "problem": f"its answers could not be read back ({str(exc)[:150]})"}
